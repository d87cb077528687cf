import FuzzSupport
import XMLStream

/// The XMPP stream parser on arbitrary bytes (the XML a peer server sends), fed in one piece and again cut at
/// points derived from the input. Properties:
/// - the parser never crashes, and refuses instead of growing past its limits;
/// - splitting never changes the outcome when the stream is accepted: the same events (the parser's contract:
///   "pushed in as bytes, split anywhere"; no stanza waits for later bytes). When it is refused, the refusal may come
///   later (libxml2 may need more bytes to notice a syntax error) or, for size, earlier, so one run's events are a
///   prefix of the other's, and two refusals are of one kind (malformed syntax and bad UTF-8 count as one: see
///   `refusal`);
/// - ``XMLStreamParser/reset()`` gives a parser that behaves like a new one;
/// - every stanza it returns serializes (``XMLSerializer``) to bytes that parse back to the same stanza.
///
/// Input: one control byte (bit 0: small limits, so the size and depth refusals are reached), eight seed bytes for
/// the split points, then the stream.
@main enum Harness { static func main() { runFuzzer(fuzzXMLStream) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXMLStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    var generator = SplitMix64(seed: input.seed())
    let stream = input.rest()
    let limits = control & 1 == 1 ? XMLStreamLimits(maxStanzaBytes: 300, maxDepth: 6) : .default

    let parser = XMLStreamParser(limits: limits)
    let whole = outcome(parser, [stream[...]])
    let pieces = randomSplit(stream, maxPieces: 16, using: &generator)
    let split = outcome(XMLStreamParser(limits: limits), pieces)
    // The size limit is checked after each piece fed (at least every 16 KiB), so with more pieces a stanza may be
    // refused for size before it closes or before a later syntax error. libxml2 notices some syntax errors only once
    // more bytes arrive, and just before an error it may still be holding back the last event. So: without refusals
    // the events must be equal (no stanza waits for later bytes); otherwise one run's events must be a prefix of the
    // other's, and two refusals (other than for size) must be of one kind.
    let (shorter, longer) = whole.events.count <= split.events.count ? (whole, split) : (split, whole)
    let agree: Bool
    if whole.refusal == nil && split.refusal == nil {
        agree = whole.events == split.events
    } else {
        let sameKind = whole.refusal == nil || split.refusal == nil || whole.isTooLarge || split.isTooLarge
            || whole.refusal == split.refusal
        agree = sameKind && longer.events.starts(with: shorter.events)
    }
    if !agree {
        fuzzFailure("split input changed the outcome: whole \(whole), split into \(pieces.count): \(split)")
    }
    parser.reset()
    let again = outcome(parser, [stream[...]])
    if again != whole { fuzzFailure("reset parser differs: \(again) vs \(whole)") }

    for case .element(let stanza) in whole.events {
        roundTrip(stanza, limits: limits)
    }
    return 0
}

/// What a parser made of `pieces`: the events, and the refusal if any.
private struct Outcome: Equatable, CustomStringConvertible {
    var events: [XMLStreamEvent] = []
    var error: XMLStreamError?
    var description: String { "\(events.count) events, error \(error.map { "\($0.kind)" } ?? "none")" }
    var isTooLarge: Bool {
        if case .stanzaTooLarge = error?.kind { return true }
        return false
    }
    /// The refusal's kind. Malformed syntax, bad UTF-8 and text between stanzas are one class: libxml2 notices some
    /// syntax errors only when more bytes arrive, and hands text over only once it knows the text ended (bad UTF-8 is
    /// caught before libxml2 sees it), so where the input is cut decides which of them is seen first (and libxml2's
    /// code). The stream is refused either way.
    var refusal: String? {
        guard let kind = error?.kind else { return nil }
        switch kind {
        case .notWellFormed, .invalidUTF8, .textBetweenStanzas: return "malformed"
        default: return "\(kind)"
        }
    }
    static func == (a: Outcome, b: Outcome) -> Bool { a.events == b.events && a.refusal == b.refusal }
}

private func outcome(_ parser: XMLStreamParser, _ pieces: [ArraySlice<UInt8>]) -> Outcome {
    var result = Outcome()
    do {
        for piece in pieces { try parser.feed(piece, into: &result.events) }
    } catch {
        result.error = error
    }
    return result
}

/// Serializes `stanza` inside a minimal stream and parses it back; it must come back equal.
private func roundTrip(_ stanza: XElement, limits: XMLStreamLimits) {
    let defaultNamespace = "jabber:component:accept"
    var bytes = Array("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns='\(defaultNamespace)'>".utf8)
    bytes += XMLSerializer.bytes(of: stanza, defaultNamespace: defaultNamespace)
    // The serialized copy may be larger than the original (escapes, declarations): no limit applies to it here.
    let parser = XMLStreamParser(limits: XMLStreamLimits(maxStanzaBytes: 1 << 30, maxDepth: limits.maxDepth + 1))
    let result = outcome(parser, [bytes[...]])
    let elements = result.events.compactMap { event -> XElement? in
        if case .element(let element) = event { return element }
        return nil
    }
    guard result.error == nil, elements == [stanza] else {
        fuzzFailure("stanza does not round-trip: \(stanza) → \(String(decoding: bytes, as: UTF8.self)) → \(result)")
    }
}
