import IsthmusCommon
import XMLStream

/// A XEP-0085 chat state (`http://jabber.org/protocol/chatstates`, §2.1): what an occupant is doing in the conversation.
public enum ChatState: String, Sendable, Hashable, CaseIterable {
    /// Actively taking part (also the state a message with a body implies).
    case active
    /// Typing a message.
    case composing
    /// Was typing and stopped.
    case paused
    /// Not paying attention for a while.
    case inactive
    /// Left the conversation (XEP-0085 §5.5: in groupchat clients SHOULD NOT send it and SHOULD ignore it).
    case gone
}

/// The signals a `<message>` carries about the conversation rather than content: a XEP-0085 chat state and a XEP-0333
/// `<displayed id/>` marker (`urn:xmpp:chat-markers:0`). Pure value, read from and written to elements; a malformed
/// marker (no id, an id over 1024 bytes) is ignored.
public struct ChatSignals: Sendable, Hashable {
    public var chatState: ChatState?
    /// The id a `<displayed/>` marker names: the room's stanza-id of the message read (XEP-0333 §5.1 in groupchat).
    public var displayed: String?

    public init(chatState: ChatState? = nil, displayed: String? = nil) {
        self.chatState = chatState
        self.displayed = displayed
    }

    /// Whether the message carries neither.
    public var isEmpty: Bool { chatState == nil && displayed == nil }

    /// Reads the first chat state and the first `<displayed/>` marker among a message's extension elements.
    public init(extensions: [XElement]) {
        self.init()
        for element in extensions {
            switch element.namespace {
            case XMPPNamespace.chatStates where chatState == nil:
                chatState = ChatState(rawValue: element.name)
            case XMPPNamespace.chatMarkers where displayed == nil && element.name == "displayed":
                if let id = element[attribute: "id"], !id.isEmpty, id.utf8.count <= MessageReferences.maxIDLength { displayed = id }
            default:
                continue
            }
        }
    }

    /// The elements for an outgoing message.
    public var elements: [XElement] {
        var out: [XElement] = []
        if let chatState { out.append(XElement(chatState.rawValue, namespace: XMPPNamespace.chatStates)) }
        if let displayed { out.append(XElement("displayed", namespace: XMPPNamespace.chatMarkers, ["id": displayed])) }
        return out
    }
}

extension Message {
    /// The chat state and displayed marker among this message's extensions.
    public var signals: ChatSignals { ChatSignals(extensions: extensions) }
}
