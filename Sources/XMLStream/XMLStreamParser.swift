/// Parses an XML stream pushed in as bytes, split anywhere: the root's start tag, each complete depth-1 element the
/// moment it closes, the root's end — and refuses hostile input (see ``XMLStreamError/Kind``).
///
/// Not thread-safe and not `Sendable`: owned by one connection (actor or thread). Parsing runs synchronously in
/// ``feed(_:into:)``; no I/O. After a refusal the parser stays failed; use a new one (or ``reset()``) for a new stream.
public final class XMLStreamParser {
    /// The limits this parser enforces.
    public let limits: XMLStreamLimits
    private var builder: StreamTreeBuilder
    private var parser: LibXML2PushParser
    private var fed = 0
    private var utf8 = UTF8Validator()
    private var failure: XMLStreamError?

    /// libxml2 is handed at most this many bytes at once, so that the size limit is checked at least this often.
    private static let sliceSize = 16 * 1024

    public init(limits: XMLStreamLimits = .default) {
        self.limits = limits
        builder = StreamTreeBuilder(limits: limits)
        parser = LibXML2PushParser(builder: builder)
    }

    /// Forgets all input and any refusal, as a new parser would: for a second stream on one connection (a c2s stream
    /// restart after SASL). Unused in Isthmus: a XEP-0114 component never restarts its stream, and each connection
    /// gets a new parser.
    public func reset() {
        builder = StreamTreeBuilder(limits: limits)
        parser = LibXML2PushParser(builder: builder)
        fed = 0
        utf8 = UTF8Validator()
        failure = nil
    }

    /// Parses `bytes` and appends every event they complete to `events`, in order.
    ///
    /// - Throws: ``XMLStreamError`` when the input is refused; `events` then holds everything that completed before
    ///   the offending bytes. Every later call throws the same error.
    public func feed(_ bytes: some Collection<UInt8>, into events: inout [XMLStreamEvent]) throws(XMLStreamError) {
        if let failure { throw failure }
        let result: XMLStreamError? = bytes.withContiguousStorageIfAvailable { buffer in
            feed(UnsafeRawBufferPointer(buffer), into: &events)
        } ?? Array(bytes).withUnsafeBytes { feed($0, into: &events) }
        if let result {
            failure = result
            throw result
        }
    }

    /// Convenience for tests and tools: the events `bytes` complete.
    public func feed(_ bytes: some Collection<UInt8>) throws(XMLStreamError) -> [XMLStreamEvent] {
        var events: [XMLStreamEvent] = []
        try feed(bytes, into: &events)
        return events
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, into events: inout [XMLStreamEvent]) -> XMLStreamError? {
        var offset = 0
        repeat {
            var slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + Self.sliceSize)])
            offset += slice.count
            // Bytes before a bad sequence still go to libxml2, so that what completed before it comes out.
            let invalidOffset = utf8.firstInvalidOffset(in: slice)
            if let invalidOffset { slice = UnsafeRawBufferPointer(rebasing: slice[..<invalidOffset]) }
            fed += slice.count
            let error = slice.isEmpty ? nil : parser.parse(slice)
            events.append(contentsOf: builder.events)
            builder.events.removeAll(keepingCapacity: true)
            if let error { return error }
            if invalidOffset != nil {
                return XMLStreamError(.invalidUTF8, message: "input is not UTF-8 (byte \(fed) of the stream)")
            }
            if builder.checkSize(consumedOrFed: fed) == .stop { return builder.error }
        } while offset < bytes.count
        return nil
    }
}
