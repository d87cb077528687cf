import XMLStream

/// XEP-0030 disco#info: an entity's identities and features. Empty in a request.
public struct DiscoInfo: Sendable, Hashable {
    /// `<identity category type name>`.
    public struct Identity: Sendable, Hashable {
        /// E.g. `conference`.
        public var category: String
        /// E.g. `text`.
        public var type: String
        /// A human-readable name (a room's title).
        public var name: String?
        public init(category: String, type: String, name: String? = nil) {
            self.category = category
            self.type = type
            self.name = name
        }
    }

    /// The node queried, if any.
    public var node: String?
    /// What the entity is.
    public var identities: [Identity]
    /// Feature `var`s in document order.
    public var features: [String]
    /// XEP-0128 extended information forms (e.g. `muc#roominfo`).
    public var forms: [DataForm]

    public init(node: String? = nil, identities: [Identity] = [], features: [String] = [], forms: [DataForm] = []) {
        self.node = node
        self.identities = identities
        self.features = features
        self.forms = forms
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("query", XMPPNamespace.discoInfo)
        self.init(node: element[attribute: "node"])
        for child in element.elements {
            switch (child.name, child.namespace) {
            case ("identity", XMPPNamespace.discoInfo):
                identities.append(Identity(
                    category: try child.required("category"), type: try child.required("type"), name: child[attribute: "name"]))
            case ("feature", XMPPNamespace.discoInfo):
                features.append(try child.required("var"))
            case ("x", XMPPNamespace.dataForms):
                if let form = try? DataForm(element: child) { forms.append(form) }
            default:
                break
            }
        }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        var query = XElement("query", namespace: XMPPNamespace.discoInfo, ["node": node])
        for identity in identities {
            query.append(XElement("identity", namespace: XMPPNamespace.discoInfo, [
                "category": identity.category, "type": identity.type, "name": identity.name,
            ]))
        }
        for feature in features { query.append(XElement("feature", namespace: XMPPNamespace.discoInfo, ["var": feature])) }
        for form in forms { query.append(form.element) }
        return query
    }

    /// Whether `feature` is advertised.
    public func has(_ feature: String) -> Bool { features.contains(feature) }

    /// XEP-0313: the entity keeps a message archive.
    public var supportsMAM: Bool { has(XMPPNamespace.mam) }
    /// XEP-0313 §7.1: `after-id`/`before-id` filters (catch-up by stanza id).
    public var supportsMAMExtended: Bool { has(XMPPNamespace.mamExtended) }
    /// XEP-0359 stanza ids assigned by the room (and XEP-0045 `muc#stable_id`).
    public var supportsStableIDs: Bool { has(XMPPNamespace.stanzaID) || has(XMPPNamespace.mucStableID) }
    /// XEP-0421 occupant ids.
    public var supportsOccupantID: Bool { has(XMPPNamespace.occupantID) }
    /// A room's name (XEP-0045 §6.4): `muc#roomconfig_roomname` of the `muc#roominfo` form, else the name of its
    /// `conference` identity; nil when neither is given or both are empty.
    public var roomName: String? {
        let form = forms.first { $0.formType == XMPPNamespace.mucRoomInfo }
        if let name = form?["muc#roomconfig_roomname"]?.first, !name.isEmpty { return name }
        if let name = identities.first(where: { $0.category == "conference" })?.name, !name.isEmpty { return name }
        return nil
    }
    /// The room's avatar as its disco#info announces it (XEP-0486 §3 `muc#roominfo_avatarhash`, or Prosody's
    /// mod_vcard_muc field `{http://modules.prosody.im/mod_vcard_muc}avatar#sha1`): a hash, ``AvatarUpdate/none`` when
    /// the field is there without a value, nil when the room publishes no such field (ejabberd 23.01 announces it in
    /// presence only). A value that is not 40 hex digits reads as ``AvatarUpdate/notReady``.
    public var roomAvatar: AvatarUpdate? {
        let fields = ["muc#roominfo_avatarhash", "{http://modules.prosody.im/mod_vcard_muc}avatar#sha1"]
        for form in forms where form.formType == XMPPNamespace.mucRoomInfo {
            for name in fields {
                if let values = form[name] { return AvatarUpdate(photoText: values.first ?? "") }
            }
        }
        return nil
    }
    /// Whether this is a chat room (a `conference` identity, XEP-0045 §6.4).
    public var isRoom: Bool { identities.contains { $0.category == "conference" } }
    /// A members-only room (XEP-0045 §6.4 feature `muc_membersonly`): only its members may enter.
    public var isMembersOnly: Bool { has("muc_membersonly") }
    /// A password-protected room (feature `muc_passwordprotected`).
    public var isPasswordProtected: Bool { has("muc_passwordprotected") }
    /// The room's subject as its `muc#roominfo` form gives it (`muc#roominfo_subject`); nil when absent or empty.
    public var roomSubject: String? {
        let form = forms.first { $0.formType == XMPPNamespace.mucRoomInfo }
        guard let subject = form?["muc#roominfo_subject"]?.first, !subject.isEmpty else { return nil }
        return subject
    }
    /// XEP-0410 self-pings answered by the room.
    public var supportsSelfPingOptimization: Bool { has(XMPPNamespace.mucSelfPingOptimization) }
}
