import IsthmusCommon
import MatrixClient
import XMLStream
import XMPP

/// The service itself (the component's domain): what it is, and the Matrix rooms it offers (XEP-0030 disco#items,
/// paged with XEP-0059 RSM: the page token of the room directory is the `last` to ask `after`).
extension GatewayRooms {
    /// The largest page of rooms one disco#items answers.
    static let maxItemsPage = 100

    func serviceIQ(_ iq: IQ) async {
        guard iq.isRequest else { return }
        let answer: IQ
        switch iq.payload {
        case .discoInfo?:
            answer = iq.result(payload: .discoInfo(DiscoInfo(
                identities: [.init(category: "conference", type: "text", name: "Matrix rooms"), .init(category: "gateway", type: "matrix")],
                features: [XMPPNamespace.discoInfo, XMPPNamespace.discoItems, XMPPNamespace.muc, XMPPNamespace.rsm, XMPPNamespace.search])))
        case .other(let query)? where query.namespace == XMPPNamespace.discoItems && query[attribute: "node"] == nil:
            answer = await roomList(iq, query: query)
        case .other(let query)? where query.namespace == XMPPNamespace.search:
            answer = await search(iq, query: query)
        default:
            answer = iq.errorResponse(StanzaError(type: .cancel, condition: .serviceUnavailable))
        }
        try? await xmpp.send(.iq(answer))
    }

    /// A page of the homeserver's room directory as disco#items: the rooms with a (canonical) alias, each at its address.
    private func roomList(_ iq: IQ, query: XElement) async -> IQ {
        let rsm = query.child("set", namespace: XMPPNamespace.rsm).flatMap { try? RSMSet(element: $0) }
        let limit = min(max(rsm?.max ?? 50, 1), Self.maxItemsPage)
        let page: PublicRoomsPage
        do {
            page = try await client.publicRooms(limit: limit, since: rsm?.after.flatMap { $0.isEmpty ? nil : $0 }, as: settings.namespace.botUserID)
        } catch {
            logger.warning("Gateway room list unavailable", metadata: ["error": error.message])
            return iq.errorResponse(StanzaError(type: .wait, condition: .serviceUnavailable, text: "The Matrix room directory did not answer"))
        }
        var items: [XElement] = []
        var spellings: [String: RoomAlias] = [:]
        for room in page.rooms {
            guard let alias = room.canonicalAlias, settings.gateway.allowedMatrixServers?.contains(alias.server) ?? true,
                  let address = GatewayRoomAddress(alias: alias, componentDomain: componentDomain) else { continue }
            spellings[address.jid.localpart!] = alias
            var item = XElement("item", namespace: XMPPNamespace.discoItems, ["jid": address.jid.description])
            if let name = room.name ?? room.canonicalAlias?.rawValue { item[attribute: "name"] = name }
            items.append(item)
        }
        try? await store.recordGatewayAliases(spellings.filter { $0.value.localpart != $0.value.localpart.lowercased() })
        var result = XElement("query", namespace: XMPPNamespace.discoItems, children: items.map { .element($0) })
        if rsm != nil || page.nextBatch != nil {
            result.append(RSMSet(first: items.first?[attribute: "jid"], last: page.nextBatch, count: page.total).element)
        }
        return iq.result(payload: .other(result))
    }

    /// XEP-0055 with a form: `get` answers the form (a search term, and the homeserver whose directory to search:
    /// ours by default), `set` the rooms found, each with its address and name.
    private func search(_ iq: IQ, query: XElement) async -> IQ {
        let form = query.child("x", namespace: XMPPNamespace.dataForms).flatMap { try? DataForm(element: $0) }
        if iq.type == .get {
            let instructions = XElement("instructions", namespace: XMPPNamespace.search, children: [.text("Find Matrix rooms by name, topic or alias.")])
            let blank = DataForm(type: "form", fields: [
                .init("FORM_TYPE", type: "hidden", values: [XMPPNamespace.search]),
                .init("term", type: "text-single", values: []),
                .init("server", type: "text-single", values: [settings.namespace.serverName]),
            ])
            return iq.result(payload: .other(XElement("query", namespace: XMPPNamespace.search, children: [.element(instructions), .element(blank.element)])))
        }
        let term = form?["term"]?.first.flatMap { $0.isEmpty ? nil : $0 }
        let server = form?["server"]?.first.flatMap { $0.isEmpty ? nil : $0 } ?? settings.namespace.serverName
        if let allowed = settings.gateway.allowedMatrixServers, !allowed.contains(server) {
            return iq.errorResponse(StanzaError(type: .cancel, condition: .notAllowed, text: "Rooms of \(server) cannot be joined from here"))
        }
        let page: PublicRoomsPage
        do {
            page = try await client.publicRooms(server: server == settings.namespace.serverName ? nil : server, limit: 50, search: term,
                                                as: settings.namespace.botUserID)
        } catch {
            return iq.errorResponse(StanzaError(type: .wait, condition: .remoteServerNotFound, text: "That homeserver's room directory did not answer"))
        }
        func field(_ name: String, _ value: String) -> XNode {
            .element(XElement("field", namespace: XMPPNamespace.dataForms, ["var": name],
                              children: [.element(XElement("value", namespace: XMPPNamespace.dataForms, children: [.text(value)]))]))
        }
        var result = XElement("x", namespace: XMPPNamespace.dataForms, ["type": "result"])
        result.append(XElement("reported", namespace: XMPPNamespace.dataForms, children: [
            .element(XElement("field", namespace: XMPPNamespace.dataForms, ["var": "jid", "label": "Address", "type": "jid-single"])),
            .element(XElement("field", namespace: XMPPNamespace.dataForms, ["var": "name", "label": "Name", "type": "text-single"])),
        ]))
        var spellings: [String: RoomAlias] = [:]
        for room in page.rooms {
            guard let alias = room.canonicalAlias, let address = GatewayRoomAddress(alias: alias, componentDomain: componentDomain) else { continue }
            spellings[address.jid.localpart!] = alias
            result.append(XElement("item", namespace: XMPPNamespace.dataForms,
                                   children: [field("jid", address.jid.description), field("name", room.name ?? alias.rawValue)]))
        }
        try? await store.recordGatewayAliases(spellings.filter { $0.value.localpart != $0.value.localpart.lowercased() })
        return iq.result(payload: .other(XElement("query", namespace: XMPPNamespace.search, children: [.element(result)])))
    }

    /// The alias an address stands for: its spelling as a directory told it, else as the address spells it.
    func spelling(of address: GatewayRoomAddress) async -> RoomAlias {
        (try? await store.gatewayAlias(address: address.jid.localpart!)) ?? address.alias
    }

    /// The alias's spelling found in its server's room directory (a search for its localpart, matched without regard
    /// to case), recorded for next time; nil when the directory does not list it.
    func searchSpelling(of address: GatewayRoomAddress) async -> RoomAlias? {
        let wanted = address.alias.rawValue.lowercased()
        guard let page = try? await client.publicRooms(server: address.alias.server == settings.namespace.serverName ? nil : address.alias.server,
                                                       limit: 20, search: address.alias.localpart, as: settings.namespace.botUserID),
              let alias = page.rooms.compactMap(\.canonicalAlias).first(where: { $0.rawValue.lowercased() == wanted }) else { return nil }
        try? await store.recordGatewayAliases([address.jid.localpart!: alias])
        return alias
    }
}
