/// One step of a depth-first walk over a parsed HTML fragment: what ``HTMLParser`` hands the converters instead of a
/// tree, so that neither building nor releasing it recurses, however deep the input was nested.
///
/// Every `.start` is matched by exactly one later `.end`. Pure value; no I/O.
enum HTMLEvent: Equatable, Sendable {
    /// An element opens. `name` is lower-case (libxml2's HTML parser folds it); attribute names too.
    case start(name: String, attributes: [String: String])
    /// Character data, entities already decoded. Long text may arrive as several consecutive `.text` events.
    case text(String)
    /// The most recently opened element closes.
    case end
}
