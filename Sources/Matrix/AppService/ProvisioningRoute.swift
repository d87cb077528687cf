/// An endpoint of Isthmus's provisioning API under `/_isthmus/provision/v1/` (on the appservice listener). Pure value.
public enum ProvisioningRoute: Sendable, Equatable {
    /// `GET links`.
    case listLinks
    /// `POST links` with `{"matrix_room": "!id or #alias", "muc": "room@service"}`.
    case createLink
    /// `DELETE links/{matrix_room}`: the path segment as sent (still percent-encoded; decoded and checked only once
    /// the caller is authenticated, so a stranger learns nothing from the answer).
    case deleteLink(rawRoom: String)

    /// The path below `/_isthmus/provision/v1`, split, to a route; nil: unknown path; `.failure`: wrong method.
    static func route(_ segments: [String], method: String) -> Result<ProvisioningRoute, AppServiceRejection>? {
        switch segments.count {
        case 1 where segments[0] == "links":
            switch method {
            case "GET": return .success(.listLinks)
            case "POST": return .success(.createLink)
            default: return .failure(.wrongMethod)
            }
        case 2 where segments[0] == "links" && !segments[1].isEmpty:
            return method == "DELETE" ? .success(.deleteLink(rawRoom: segments[1])) : .failure(.wrongMethod)
        default:
            return nil
        }
    }
}
