/// Every XML namespace Isthmus reads or writes, in one place (STYLE.md habit 13).
public enum XMPPNamespace {
    // MARK: Streams (RFC 6120, XEP-0114)
    /// The stream root's namespace (`stream:` prefix).
    public static let streams = "http://etherx.jabber.org/streams"
    /// Stream error conditions (RFC 6120 §4.9.3).
    public static let streamErrors = "urn:ietf:params:xml:ns:xmpp-streams"
    /// Stanza error conditions (RFC 6120 §8.3.3).
    public static let stanzaErrors = "urn:ietf:params:xml:ns:xmpp-stanzas"
    /// Stanzas on a client stream.
    public static let client = "jabber:client"
    /// Stanzas on a XEP-0114 component stream.
    public static let component = "jabber:component:accept"
    /// Stanzas on a server-to-server stream.
    public static let server = "jabber:server"
    /// SASL (RFC 6120 §6): the c2s test client and the client mode's negotiation.
    public static let sasl = "urn:ietf:params:xml:ns:xmpp-sasl"
    /// Resource binding (RFC 6120 §7): the c2s test client and the client mode's negotiation.
    public static let bind = "urn:ietf:params:xml:ns:xmpp-bind"
    /// STARTTLS (RFC 6120 §5).
    public static let tls = "urn:ietf:params:xml:ns:xmpp-tls"
    /// XEP-0440: the channel-binding types a server announces for SASL.
    public static let saslChannelBinding = "urn:xmpp:sasl-cb:0"
    /// XEP-0388 extensible SASL (SASL2).
    public static let sasl2 = "urn:xmpp:sasl:2"
    /// XEP-0386 Bind2 (binding inside SASL2).
    public static let bind2 = "urn:xmpp:bind:0"
    /// XEP-0484 FAST tokens.
    public static let fast = "urn:xmpp:fast:0"
    /// XEP-0198 stream management (acks and resumption on a client stream).
    public static let streamManagement = "urn:xmpp:sm:3"

    // MARK: Service discovery, pings, forms
    /// XEP-0030 disco#info.
    public static let discoInfo = "http://jabber.org/protocol/disco#info"
    /// XEP-0030 disco#items.
    public static let discoItems = "http://jabber.org/protocol/disco#items"
    /// XEP-0055 Jabber Search (with XEP-0004 forms).
    public static let search = "jabber:iq:search"
    /// XEP-0199 ping (also XEP-0410 MUC self-ping).
    public static let ping = "urn:xmpp:ping"
    /// XEP-0004 data forms.
    public static let dataForms = "jabber:x:data"

    // MARK: Multi-user chat (XEP-0045) and its companions
    /// Join requests (`<x xmlns='…muc'>`).
    public static let muc = "http://jabber.org/protocol/muc"
    /// Occupant information in presences and messages.
    public static let mucUser = "http://jabber.org/protocol/muc#user"
    /// Room configuration by the owner (instant rooms).
    public static let mucOwner = "http://jabber.org/protocol/muc#owner"
    /// The room configuration form's `FORM_TYPE` (XEP-0045 §16.5.3).
    public static let mucRoomConfig = "http://jabber.org/protocol/muc#roomconfig"
    /// XEP-0045 §15.5.4 `muc#roominfo`: the FORM_TYPE of a room's extended disco#info (name, description…).
    public static let mucRoomInfo = "http://jabber.org/protocol/muc#roominfo"
    /// Moderation by admins and moderators.
    public static let mucAdmin = "http://jabber.org/protocol/muc#admin"
    /// Disco feature: the room keeps message ids stable (XEP-0045 §6.4).
    public static let mucStableID = "http://jabber.org/protocol/muc#stable_id"
    /// Disco feature: XEP-0410 self-pings are answered by the room itself.
    public static let mucSelfPingOptimization = "http://jabber.org/protocol/muc#self-ping-optimization"
    /// XEP-0421 occupant ids.
    public static let occupantID = "urn:xmpp:occupant-id:0"

    // MARK: Message ids, time, archives
    /// XEP-0359 `<stanza-id>` and `<origin-id>`.
    public static let stanzaID = "urn:xmpp:sid:0"
    /// XEP-0203 delayed delivery.
    public static let delay = "urn:xmpp:delay"
    /// XEP-0313 message archive management.
    public static let mam = "urn:xmpp:mam:2"
    /// Disco feature: MAM `before-id`/`after-id`/`ids` (XEP-0313 §7.1).
    public static let mamExtended = "urn:xmpp:mam:2#extended"
    /// XEP-0059 result set management.
    public static let rsm = "http://jabber.org/protocol/rsm"
    /// XEP-0297 forwarded stanzas.
    public static let forward = "urn:xmpp:forward:0"

    // MARK: Message features the bridge translates
    /// XEP-0308 last message correction.
    public static let correction = "urn:xmpp:message-correct:0"
    /// XEP-0424 message retraction (v0.4+: `<retract id>` with the stanza-id).
    public static let retraction = "urn:xmpp:message-retract:1"
    /// XEP-0424 up to v0.3: `<retract/>` inside a XEP-0422 `<apply-to id>` with the origin-id.
    public static let retractionLegacy = "urn:xmpp:message-retract:0"
    /// XEP-0422 message fastening (the wrapper of the older retraction and moderation forms).
    public static let fasten = "urn:xmpp:fasten:0"
    /// XEP-0425 message moderation (v0.3+).
    public static let moderation = "urn:xmpp:message-moderate:1"
    /// XEP-0425 up to v0.2 (what prosody-modules' mod_muc_moderation speaks), inside `<apply-to>`.
    public static let moderationLegacy = "urn:xmpp:message-moderate:0"
    /// XEP-0334 message processing hints (`<store/>`).
    public static let hints = "urn:xmpp:hints"
    /// XEP-0393 message styling (`<unstyled/>`).
    public static let styling = "urn:xmpp:styling:0"
    /// XEP-0444 reactions.
    public static let reactions = "urn:xmpp:reactions:0"
    /// XEP-0461 replies.
    public static let reply = "urn:xmpp:reply:0"
    /// XEP-0428 fallback indication.
    public static let fallback = "urn:xmpp:fallback:0"
    /// XEP-0085 chat states.
    public static let chatStates = "http://jabber.org/protocol/chatstates"
    /// XEP-0333 displayed markers.
    public static let chatMarkers = "urn:xmpp:chat-markers:0"
    /// RFC 6121 rosters.
    public static let roster = "jabber:iq:roster"
    /// XEP-0249 direct MUC invitations.
    public static let directInvite = "jabber:x:conference"
    /// XEP-0066 out-of-band data.
    public static let outOfBand = "jabber:x:oob"
    /// XEP-0447 stateless file sharing.
    public static let fileSharing = "urn:xmpp:sfs:0"
    /// XEP-0446 file metadata element.
    public static let fileMetadata = "urn:xmpp:file:metadata:0"
    /// XEP-0103 URL address information (an SFS source).
    public static let urlData = "http://jabber.org/protocol/url-data"
    /// XEP-0363 HTTP file upload.
    public static let httpUpload = "urn:xmpp:http:upload:0"
    /// XEP-0153 vCard-based avatars (presence update).
    public static let vcardUpdate = "vcard-temp:x:update"
    /// XEP-0054 vCards.
    public static let vcard = "vcard-temp"
    /// XEP-0071 XHTML-IM (deprecated, still sent by some clients).
    public static let xhtmlIM = "http://jabber.org/protocol/xhtml-im"

    /// The namespaces a stanza (`message`, `presence`, `iq`) may have, depending on the stream.
    public static let stanzaNamespaces: Set<String> = [component, client, server]
}
