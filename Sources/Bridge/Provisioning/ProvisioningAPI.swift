import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService

/// The provisioning HTTP API (`/_isthmus/provision/v1/links`): list, link and unlink through ``LinkService``, with
/// the same checks and effects as `isthmus link/unlink`. Answers JSON; refusals are Matrix errors (`errcode`,
/// `error`). The listener has checked the bearer token and the body size already. Does I/O; runs on the listener's tasks.
public struct ProvisioningAPI: ProvisioningHandler {
    let service: LinkService
    let logger: Logger

    public init(service: LinkService, logger: Logger) {
        self.service = service
        self.logger = logger
    }

    /// One link as the API shows it.
    struct LinkBody: Codable, Equatable {
        var matrixRoom: String
        var matrixAlias: String?
        var muc: String
        var status: String
        var detail: String?
        /// Whether the MUC's name is copied to the Matrix room.
        var syncName: Bool

        init(_ link: RoomLink) {
            syncName = link.syncName
            matrixRoom = link.matrixRoom.rawValue
            matrixAlias = link.matrixAlias?.rawValue
            muc = link.muc.description
            status = link.unlinking ? "unlinking" : link.status.rawValue
            detail = link.detail
        }

        enum CodingKeys: String, CodingKey {
            case matrixRoom = "matrix_room", matrixAlias = "matrix_alias", muc, status, detail, syncName = "sync_name"
        }
    }

    struct LinksBody: Encodable { var links: [LinkBody] }

    struct LinkRequest: Decodable {
        var matrixRoom: String
        var muc: String
        /// The opt-in that gives Matrix moderators' occupants the MUC moderator role (absent: off).
        var matrixModeratorsToMUC: Bool?
        /// Optional, default false: copy the MUC's name to the Matrix room (`link --sync-name`).
        var syncName: Bool?
        enum CodingKeys: String, CodingKey {
            case matrixRoom = "matrix_room", muc, matrixModeratorsToMUC = "matrix_moderators_to_muc", syncName = "sync_name"
        }
    }

    public func provision(_ route: ProvisioningRoute, body: Data) async -> HTTPServerResponse {
        do {
            switch route {
            case .listLinks:
                return .json(200, LinksBody(links: try await service.links().map(LinkBody.init)))
            case .createLink:
                let request = try decode(body)
                guard let room = LinkService.MatrixRoom(request.matrixRoom) else {
                    throw AppServiceRejection(status: 400, errcode: MatrixErrorCode.invalidParameter,
                                              message: "matrix_room must be a room id (!…) or alias (#name:server)")
                }
                guard let muc = JID(request.muc), muc.localpart != nil, muc.isBare else {
                    throw AppServiceRejection(status: 400, errcode: MatrixErrorCode.invalidParameter,
                                              message: "muc must be a MUC room JID (room@service)")
                }
                let link = try await service.link(room, muc: muc, matrixModeratorsToMUC: request.matrixModeratorsToMUC ?? false,
                                                  syncName: request.syncName ?? false)
                logger.info("Linked through the provisioning API", metadata: [
                    "matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description])
                return .json(201, LinkBody(link))
            case .deleteLink(let raw):
                guard let text = PercentEncoding.decode(raw), let room = LinkService.MatrixRoom(text) else {
                    throw AppServiceRejection(status: 400, errcode: MatrixErrorCode.invalidParameter,
                                              message: "the path must end in a room id (!…) or alias (#name:server)")
                }
                var link = try await service.unlink(room)
                link.unlinking = true
                logger.info("Unlinked through the provisioning API", metadata: [
                    "matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description])
                return .json(200, LinkBody(link))
            }
        } catch let rejection as AppServiceRejection {
            return .matrixError(rejection)
        } catch let refusal as LinkRefusal {
            return .matrixError(Self.rejection(refusal))
        } catch {
            logger.error("Provisioning request failed", metadata: ["error": "\(error)"])
            return .matrixError(AppServiceRejection(status: 500, errcode: MatrixErrorCode.unknown, message: "Internal error"))
        }
    }

    private func decode(_ body: Data) throws -> LinkRequest {
        do {
            return try JSONDecoder().decode(LinkRequest.self, from: body)
        } catch {
            throw AppServiceRejection(status: 400, errcode: MatrixErrorCode.badJSON,
                                      message: "expected {\"matrix_room\": \"!id or #alias\", \"muc\": \"room@service\"}")
        }
    }

    /// The HTTP answer for a refusal.
    static func rejection(_ refusal: LinkRefusal) -> AppServiceRejection {
        let (status, errcode): (Int, MatrixErrorCode)
        switch refusal {
        case .mucAlreadyLinked, .roomAlreadyLinked: (status, errcode) = (409, MatrixErrorCode.roomInUse)
        case .unknownAlias, .unknownRoom, .notLinked: (status, errcode) = (404, MatrixErrorCode.notFound)
        case .botCannotJoin, .mucDomainNotAllowed, .encryptedRoom, .unencryptedRoom: (status, errcode) = (403, MatrixErrorCode.forbidden)
        case .tokenRejected, .homeserverRefused, .homeserverUnreachable: (status, errcode) = (502, MatrixErrorCode.unknown)
        }
        return AppServiceRejection(status: status, errcode: errcode, message: refusal.description)
    }
}
