import XMPPClient

/// An XMPP event as it reaches the bridge, with the receipt that says when its effect is durable (client mode).
public struct XMPPLinkArrival: Sendable {
    public var event: XMPPLinkEvent
    /// Client mode: call ``XMPPReceipt/handled()`` once the stanza's effect is durable — only then does it count in
    /// the XEP-0198 acks the bridge's account gives the server. nil for the component (no stream management) and for
    /// events that are not stanzas.
    public var receipt: XMPPReceipt?

    public init(_ event: XMPPLinkEvent, receipt: XMPPReceipt? = nil) {
        self.event = event
        self.receipt = receipt
    }
}

/// Tells the account's connection that one inbound stanza's effect is durable (XEP-0198 §4: a stanza counts in `h`
/// once handled, and what the server has not seen counted it delivers again after a resumption). Whoever takes an
/// arrival calls ``handled()`` exactly once, when its effect is in the store or sent on — or never, when the bridge
/// stops before that (the resumed session then delivers the stanza again, and the message map finds it bridged).
public struct XMPPReceipt: Sendable {
    private let give: @Sendable () async -> Void

    /// A receipt that runs `give` when given (client mode: the account's connection counts the stanza).
    public init(_ give: @escaping @Sendable () async -> Void) {
        self.give = give
    }

    /// Counts the stanza as handled.
    public func handled() async {
        await give()
    }
}
