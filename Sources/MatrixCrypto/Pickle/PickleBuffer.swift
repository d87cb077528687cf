/// Writes the fields of a pickle: fixed-size integers big-endian, byte strings with a 4-byte length. Pure value.
struct PickleWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
    mutating func uint32(_ value: UInt32) { bytes += bigEndian(value) }
    mutating func uint64(_ value: UInt64) { uint32(UInt32(value >> 32)); uint32(UInt32(truncatingIfNeeded: value)) }
    mutating func data(_ value: [UInt8]) { uint32(UInt32(value.count)); bytes += value }
    /// A count then each element.
    mutating func array<T>(_ values: [T], _ write: (inout PickleWriter, T) -> Void) {
        uint32(UInt32(values.count))
        for value in values { write(&self, value) }
    }
    /// Presence then the value.
    mutating func optional<T>(_ value: T?, _ write: (inout PickleWriter, T) -> Void) {
        bool(value != nil)
        if let value { write(&self, value) }
    }
}

/// Reads what `PickleWriter` wrote; any shortfall or leftover is `malformedPickle(kind:…)`. Pure value.
struct PickleReader {
    private let bytes: [UInt8]
    private var position = 0
    let kind: String

    init(_ bytes: [UInt8], kind: String) {
        self.bytes = bytes
        self.kind = kind
    }

    mutating func byte() throws -> UInt8 { try take(1).first! }

    mutating func bool() throws -> Bool {
        switch try byte() {
        case 0: false
        case 1: true
        case let other: throw MatrixCryptoError.malformedPickle(kind: kind, reason: "flag \(other)")
        }
    }

    mutating func uint32() throws -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func uint64() throws -> UInt64 { UInt64(try uint32()) << 32 | UInt64(try uint32()) }

    /// A length-prefixed byte string, which must have `length` bytes when given.
    mutating func data(length: Int? = nil) throws -> [UInt8] {
        let count = Int(try uint32())
        if let length, count != length {
            throw MatrixCryptoError.malformedPickle(kind: kind, reason: "field of \(count) bytes, expected \(length)")
        }
        return Array(try take(count))
    }

    mutating func array<T>(limit: Int, _ read: (inout PickleReader) throws -> T) throws -> [T] {
        let count = Int(try uint32())
        guard count <= limit else { throw MatrixCryptoError.malformedPickle(kind: kind, reason: "\(count) entries") }
        return try (0..<count).map { _ in try read(&self) }
    }

    mutating func optional<T>(_ read: (inout PickleReader) throws -> T) throws -> T? {
        try bool() ? read(&self) : nil
    }

    /// Throws unless every byte was read.
    func finish() throws {
        guard position == bytes.count else {
            throw MatrixCryptoError.malformedPickle(kind: kind, reason: "\(bytes.count - position) bytes left over")
        }
    }

    private mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count <= bytes.count - position else { throw MatrixCryptoError.malformedPickle(kind: kind, reason: "truncated") }
        defer { position += count }
        return bytes[position..<position + count]
    }
}
