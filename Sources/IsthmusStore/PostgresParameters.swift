/// The parameters of one `PQexecPrepared` call, encoded into one buffer. Pure; no I/O.
///
/// Integers, reals and text travel in text format with their type left to the server (type 0: PostgreSQL infers
/// each parameter's type from its context, so an int8 value compares with an int4 column and `?` works for booleans
/// stored as integers). Blobs travel in binary format as bytea (type 17): raw bytes, nothing to escape. NULL is a
/// null pointer.
struct PostgresParameters {
    /// `BYTEAOID` from PostgreSQL's catalog (`pg_type.dat`); libpq's headers do not export type OIDs.
    static let byteaOID: UInt32 = 17

    /// Every value's bytes, text ones NUL-terminated (libpq reads text parameters as C strings).
    private var storage: [UInt8] = []
    /// Where each value starts in `storage`; nil for NULL.
    private var offsets: [Int?] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []
    /// Which parameters (0-based) are blobs; empty (and unallocated) when none is.
    private(set) var byteaPositions: [Int] = []

    /// Encodes `parameters`. Throws `22021` (character_not_in_repertoire, what the server says for the same text) when
    /// a text value holds a NUL character, which PostgreSQL's text cannot store; `sql` is for the error.
    init(_ parameters: [SQLValue], sql: String) throws(PostgresError) {
        guard !parameters.isEmpty else { return }
        offsets.reserveCapacity(parameters.count)
        lengths.reserveCapacity(parameters.count)
        formats.reserveCapacity(parameters.count)
        for (position, parameter) in parameters.enumerated() {
            let start = storage.count
            switch parameter {
            case .null:
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
                continue
            case .integer(let value):
                Self.appendDecimal(value, to: &storage)
            case .real(let value):
                if value.isNaN {
                    storage.append(contentsOf: "NaN".utf8)
                } else if value.isInfinite {
                    storage.append(contentsOf: (value < 0 ? "-Infinity" : "Infinity").utf8)
                } else {
                    storage.append(contentsOf: value.description.utf8)  // shortest text that reads back exactly
                }
            case .text(let value):
                let before = storage.count
                storage.append(contentsOf: value.utf8)
                if storage[before...].contains(0) {
                    throw PostgresError(sqlState: "22021", message: "a text parameter contains a NUL character, which "
                                        + "PostgreSQL text cannot hold", sql: sql, isConnectionFailure: false)
                }
            case .blob(let bytes):
                storage.append(contentsOf: bytes)
                offsets.append(start)
                lengths.append(Int32(bytes.count))
                formats.append(1)
                byteaPositions.append(position)
                continue
            }
            lengths.append(Int32(storage.count - start))
            storage.append(0)
            offsets.append(start)
            formats.append(0)
        }
        storage.append(0)  // see withPointers
    }

    /// Calls `body` with the three arrays `PQexecPrepared` takes (all nil when there are no parameters).
    func withPointers<R>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        guard !offsets.isEmpty else { return body(nil, nil, nil) }
        return storage.withUnsafeBytes { bytes in
            // Never nil: `storage` always ends with a spare NUL (init), so an empty blob still gets a non-null pointer
            // (null would mean NULL).
            let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
            return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: offsets.count) { values in
                for (index, offset) in offsets.enumerated() { values[index] = offset.map { base + $0 } }
                return lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(UnsafePointer(values.baseAddress), lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    /// Appends `value` in decimal without building a String.
    private static func appendDecimal(_ value: Int64, to storage: inout [UInt8]) {
        if value < 0 { storage.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = storage.count
        repeat {
            storage.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        storage[start...].reverse()
    }
}
