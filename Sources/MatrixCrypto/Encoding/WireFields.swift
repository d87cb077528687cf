/// The protobuf-like field encoding of Olm and Megolm messages (libolm `message.cpp`; the Olm and Megolm specs'
/// "Message format"): after a version byte, fields of a one-byte key `field << 3 | wire type`, where wire type 0 is an
/// unsigned varint and 2 a varint length followed by that many bytes. Pure functions over byte arrays.
enum WireFields {
    /// A decoded field value.
    enum Value: Equatable {
        case integer(UInt64)
        case bytes([UInt8])
    }

    /// Appends `value` as a varint (7 bits per byte, least significant first, high bit = more follows).
    static func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }

    /// Appends field `number` as a varint.
    static func appendInteger(_ number: UInt8, _ value: UInt64, to output: inout [UInt8]) {
        output.append(number << 3)
        appendVarint(value, to: &output)
    }

    /// Appends field `number` as length-delimited bytes.
    static func appendBytes(_ number: UInt8, _ bytes: [UInt8], to output: inout [UInt8]) {
        output.append(number << 3 | 2)
        appendVarint(UInt64(bytes.count), to: &output)
        output += bytes
    }

    /// The fields of `bytes` by number (a repeated field keeps its last value, as libolm and protobuf do). Unknown
    /// field numbers are returned too, for the caller to ignore; wire types other than 0 and 2, a truncated field
    /// or a varint longer than 64 bits throw `malformedMessage(kind:…)`.
    static func parse(_ bytes: ArraySlice<UInt8>, kind: String) throws -> [UInt64: Value] {
        var fields: [UInt64: Value] = [:]
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let key = try readVarint(bytes, at: &index, kind: kind)
            switch key & 7 {
            case 0:
                fields[key >> 3] = .integer(try readVarint(bytes, at: &index, kind: kind))
            case 2:
                let length = try readVarint(bytes, at: &index, kind: kind)
                guard length <= UInt64(bytes.endIndex - index) else {
                    throw MatrixCryptoError.malformedMessage(kind: kind, reason: "field \(key >> 3) is truncated")
                }
                fields[key >> 3] = .bytes(Array(bytes[index..<index + Int(length)]))
                index += Int(length)
            default:
                throw MatrixCryptoError.malformedMessage(kind: kind, reason: "unsupported wire type \(key & 7)")
            }
        }
        return fields
    }

    /// Reads one varint at `index`, advancing it.
    private static func readVarint(_ bytes: ArraySlice<UInt8>, at index: inout Int, kind: String) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < bytes.endIndex else {
                throw MatrixCryptoError.malformedMessage(kind: kind, reason: "truncated varint")
            }
            guard shift < 64 else { throw MatrixCryptoError.malformedMessage(kind: kind, reason: "varint too long") }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }
}

extension [UInt64: WireFields.Value] {
    /// Field `number` as bytes of exactly `length` (when given); throws `malformedMessage` when absent or wrong.
    func bytes(_ number: UInt64, length: Int? = nil, name: String, kind: String) throws -> [UInt8] {
        guard case .bytes(let value)? = self[number] else {
            throw MatrixCryptoError.malformedMessage(kind: kind, reason: "missing \(name)")
        }
        if let length, value.count != length {
            throw MatrixCryptoError.malformedMessage(kind: kind, reason: "\(name) is \(value.count) bytes, not \(length)")
        }
        return value
    }

    /// Field `number` as an integer that fits 32 bits; throws `malformedMessage` when absent or larger.
    func uint32(_ number: UInt64, name: String, kind: String) throws -> UInt32 {
        guard case .integer(let value)? = self[number] else {
            throw MatrixCryptoError.malformedMessage(kind: kind, reason: "missing \(name)")
        }
        guard let small = UInt32(exactly: value) else {
            throw MatrixCryptoError.malformedMessage(kind: kind, reason: "\(name) \(value) exceeds 32 bits")
        }
        return small
    }
}
