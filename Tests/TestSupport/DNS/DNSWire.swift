import Network

/// A DNS query as ``FakeDNSServer`` received it (RFC 1035 §4.1): its id, the name and type asked, and the question
/// section's bytes (echoed in the reply, and what answer names point back into).
public struct DNSQuery: Sendable {
    public var id: UInt16
    /// Lowercased, without the trailing dot.
    public var name: String
    public var type: UInt16
    /// The question section as sent (name, type, class).
    public var question: [UInt8]
    /// The question's name starts right after the 12-byte header.
    public static let nameOffset = 12

    public init(id: UInt16, name: String, type: UInt16, question: [UInt8]) {
        self.id = id
        self.name = name
        self.type = type
        self.question = question
    }
}

/// DNS messages as wire bytes (RFC 1035 §4), built by hand for ``FakeDNSServer``: replies that echo the question,
/// SRV records (RFC 2782) whose owner is a pointer to the question's name and whose targets are compressed against it
/// (§4.1.4), and the broken records a hostile server might send. Pure.
public enum DNSWire {
    public static let typeSRV: UInt16 = 33
    public static let typeCNAME: UInt16 = 5
    /// Response codes (RFC 1035 §4.1.1).
    public static let noError: UInt8 = 0, serverFailure: UInt8 = 2, nameError: UInt8 = 3

    /// The query in `bytes`, or nil when they are not one question.
    public static func query(_ bytes: [UInt8]) -> DNSQuery? {
        guard bytes.count > 12, bytes[4] == 0, bytes[5] == 1 else { return nil }
        var offset = DNSQuery.nameOffset
        var labels: [String] = []
        while offset < bytes.count, bytes[offset] != 0 {
            let length = Int(bytes[offset])
            guard length < 64, offset + 1 + length < bytes.count else { return nil }
            labels.append(String(decoding: bytes[(offset + 1)...(offset + length)], as: UTF8.self).lowercased())
            offset += 1 + length
        }
        guard offset + 5 <= bytes.count else { return nil }
        return DNSQuery(id: UInt16(bytes[0]) << 8 | UInt16(bytes[1]), name: labels.joined(separator: "."),
                        type: UInt16(bytes[offset + 1]) << 8 | UInt16(bytes[offset + 2]),
                        question: Array(bytes[DNSQuery.nameOffset..<(offset + 5)]))
    }

    /// A reply to `query` with `rcode` and the encoded `answers`; `answerCount` overrides the header's count (a lie).
    public static func reply(to query: DNSQuery, rcode: UInt8 = noError, answers: [[UInt8]] = [],
                             answerCount: UInt16? = nil) -> [UInt8] {
        let count = answerCount ?? UInt16(answers.count)
        // QR, opcode 0, AA, RD; RA; no questions beyond the one echoed.
        let header: [UInt8] = [UInt8(query.id >> 8), UInt8(query.id & 0xFF), 0x85, 0x80 | rcode, 0, 1,
                               UInt8(count >> 8), UInt8(count & 0xFF), 0, 0, 0, 0]
        return header + query.question + answers.flatMap { $0 }
    }

    /// An SRV answer record for the question's name: its target compressed against the question where they share a suffix.
    public static func srv(_ record: SRVRecord, for query: DNSQuery) -> [UInt8] {
        let target = record.target == "." ? [UInt8(0)] : name(record.target, compressedAgainst: query)
        return answer(type: typeSRV, data: bytes(record.priority) + bytes(record.weight) + bytes(record.port) + target)
    }

    /// An answer record with `type` and `data`, owned by `owner` (encoded; by default a pointer to the question's
    /// name), `length` overriding the data's length (a lie).
    public static func answer(type: UInt16, data: [UInt8], owner: [UInt8] = pointer(to: DNSQuery.nameOffset),
                              length: UInt16? = nil) -> [UInt8] {
        owner + bytes(type) + bytes(1) + [0, 0, 0x0E, 0x10] + bytes(length ?? UInt16(data.count)) + data
    }

    /// `text` as labels, its longest suffix shared with the question's name replaced by a pointer into the question.
    public static func name(_ text: String, compressedAgainst query: DNSQuery) -> [UInt8] {
        let labels = text.lowercased().split(separator: ".").map(String.init)
        let asked = query.name.split(separator: ".").map(String.init)
        var encoded: [UInt8] = []
        for index in labels.indices {
            let suffix = Array(labels[index...])
            if suffix.count <= asked.count, Array(asked.suffix(suffix.count)) == suffix {
                let skipped = asked.dropLast(suffix.count).reduce(0) { $0 + 1 + $1.utf8.count }
                return encoded + pointer(to: DNSQuery.nameOffset + skipped)
            }
            encoded += [UInt8(labels[index].utf8.count)] + Array(labels[index].utf8)
        }
        return encoded + [0]
    }

    /// A compression pointer (RFC 1035 §4.1.4) to `offset` in the message.
    public static func pointer(to offset: Int) -> [UInt8] { [0xC0 | UInt8(offset >> 8), UInt8(offset & 0xFF)] }

    /// Where the target of a reply's first answer starts (the record made by ``answer(type:data:length:)``).
    public static func firstTargetOffset(in query: DNSQuery) -> Int { DNSQuery.nameOffset + query.question.count + 12 + 6 }

    private static func bytes(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
}
