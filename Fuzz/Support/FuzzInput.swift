import CLibFuzzer
#if canImport(Glibc)
import Glibc
#endif

/// The bytes libFuzzer hands a harness, read front to back: control bytes first (which variant to run, where to
/// split), the rest as the input proper. Pure; no I/O.
///
/// Reading past the end yields zeros, so every byte string is a valid input (libFuzzer needs no format to learn).
public struct FuzzInput {
    public private(set) var bytes: ArraySlice<UInt8>

    /// Copies `size` bytes from libFuzzer's buffer (which may be null when `size` is 0).
    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { ArraySlice(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }

    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// The next byte, or 0 when none is left.
    public mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    /// The next eight bytes as a seed (zeros past the end).
    public mutating func seed() -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }

    /// Everything not read yet, up to the first `separator` byte (which is consumed).
    public mutating func field(until separator: UInt8) -> [UInt8] {
        guard let end = bytes.firstIndex(of: separator) else { return rest() }
        defer { bytes = bytes[(end + 1)...] }
        return Array(bytes[..<end])
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a deterministic generator for split points derived from the input, so a
/// crashing input replays exactly. Hand-written because the standard library offers no seedable generator.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `bytes` cut into consecutive non-empty pieces at points drawn from `generator`; `maxPieces` ≥ 1.
public func randomSplit(_ bytes: [UInt8], maxPieces: Int, using generator: inout SplitMix64) -> [ArraySlice<UInt8>] {
    guard bytes.count > 1, maxPieces > 1 else { return [bytes[...]] }
    let cuts = Set((0..<Int.random(in: 0..<maxPieces, using: &generator)).map { _ in Int.random(in: 1..<bytes.count, using: &generator) })
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    for cut in cuts.sorted() {
        pieces.append(bytes[start..<cut])
        start = cut
    }
    pieces.append(bytes[start...])
    return pieces
}

/// A property the harness checks failed: prints what and aborts, so libFuzzer saves the input as a crash.
public func fuzzFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz property violated: \(message)", file: file, line: line)
}

/// Runs libFuzzer on `harness` with the process's arguments, then exits with libFuzzer's status.
///
/// SwiftPM gives every executable a Swift `main`, so libFuzzer's own `main` is never linked in; each harness's `@main`
/// calls this instead (libFuzzer's documented way to be driven by a program with its own `main`).
public func runFuzzer(_ harness: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, harness))
}
