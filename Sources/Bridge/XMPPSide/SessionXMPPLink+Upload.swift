import IsthmusCommon
import XMPP
import XMPPComponent

/// XEP-0363 over the component connection: finding the server's upload service and asking it for slots.
extension SessionXMPPLink {
    public func findUploadService(on domain: JID, as asker: JID) async throws -> HTTPUpload.Service? {
        do {
            let response = try await connection.sendIQ(IQ(type: .get, from: asker, to: domain, payload: .other(HTTPUpload.itemsRequest)),
                                                       timeout: .seconds(15))
            guard response.type == .result, case .other(let query)? = response.payload else { return nil }
            for item in HTTPUpload.items(query) {
                guard let info = try? await connection.discoInfo(of: item, as: asker, timeout: .seconds(15)) else { continue }
                if let service = HTTPUpload.Service(jid: item, info: info) { return service }
            }
            return nil
        } catch {
            throw Self.linkError(error)
        }
    }

    public func requestUploadSlot(on service: JID, fileName: String, size: Int64, contentType: String,
                                  as requester: JID) async throws -> HTTPUpload.Slot? {
        do {
            let request = HTTPUpload.request(fileName: fileName, size: size, contentType: contentType)
            let response = try await connection.sendIQ(IQ(type: .get, from: requester, to: service, payload: .other(request)),
                                                       timeout: .seconds(15))
            guard response.type == .result, case .other(let slot)? = response.payload else { return nil }
            return HTTPUpload.Slot(element: slot)
        } catch {
            throw Self.linkError(error)
        }
    }
}
