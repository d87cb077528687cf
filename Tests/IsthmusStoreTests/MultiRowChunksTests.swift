@testable import IsthmusStore
import Testing

@Suite struct MultiRowChunksTests {
    @Test func rowsAreCutIntoTheLargestSizesFirstInOrder() {
        #expect(MultiRowChunks.split([Int]()).isEmpty)
        #expect(MultiRowChunks.split([1]).map(\.count) == [1])
        #expect(MultiRowChunks.split(Array(0..<101)).map(\.count) == [64, 32, 4, 1])
        #expect(MultiRowChunks.split(Array(0..<127)).map(\.count) == [64, 32, 16, 8, 4, 2, 1])
        #expect(MultiRowChunks.split(Array(0..<200)).map(\.count) == [64, 64, 64, 8])
        #expect(MultiRowChunks.split(Array(0..<101)).flatMap { $0 } == Array(0..<101))
    }
}
