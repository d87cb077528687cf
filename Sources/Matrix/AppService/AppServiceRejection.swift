/// A refusal the listener answers with: HTTP status plus a Matrix error body (`errcode`, `error`). Pure value.
public struct AppServiceRejection: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var errcode: MatrixErrorCode
    public var message: String

    public init(status: Int, errcode: MatrixErrorCode, message: String) {
        self.status = status
        self.errcode = errcode
        self.message = message
    }

    /// The error as the Matrix JSON the listener sends.
    public var body: MatrixErrorBody { MatrixErrorBody(errcode: errcode, error: message) }

    public var description: String { "\(status) \(errcode): \(message)" }

    static let missingToken = AppServiceRejection(status: 401, errcode: MatrixErrorCode.unauthorized, message: "Missing access token")
    static let wrongToken = AppServiceRejection(status: 403, errcode: MatrixErrorCode.forbidden, message: "Invalid hs_token")
    static let wrongProvisioningToken = AppServiceRejection(status: 403, errcode: MatrixErrorCode.forbidden, message: "Invalid provisioning token")
    static let tooLarge = AppServiceRejection(status: 413, errcode: MatrixErrorCode.tooLarge, message: "Request body too large")
    static let unknownPath = AppServiceRejection(status: 404, errcode: MatrixErrorCode.unrecognized, message: "Unrecognized request")
    static let wrongMethod = AppServiceRejection(status: 405, errcode: MatrixErrorCode.unrecognized, message: "Method not allowed")

    static func invalidParameter(_ message: String) -> AppServiceRejection {
        AppServiceRejection(status: 400, errcode: MatrixErrorCode.invalidParameter, message: message)
    }
}
