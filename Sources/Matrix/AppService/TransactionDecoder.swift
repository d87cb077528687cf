import FoundationEssentials
import IsthmusCommon

/// Decodes the body of `PUT /transactions/{txnId}` into a ``Transaction``. Pure.
///
/// Not JSON → 400 `M_NOT_JSON`; JSON without an `events` array → 400 `M_BAD_JSON` (appservice API §2.3.2).
/// Individual events that do not decode never fail the transaction (see ``Transaction/rejectedEvents``).
public enum TransactionDecoder {
    public static func decode(_ body: Data, id: TransactionID) -> Result<Transaction, AppServiceRejection> {
        do {
            let decoded = try JSONDecoder().decode(TransactionBody.self, from: body)
            return .success(Transaction(id: id, events: decoded.events, ephemeral: decoded.ephemeral,
                                        toDevice: decoded.toDevice, deviceListsChanged: decoded.deviceListsChanged,
                                        keyCounts: decoded.keyCounts, rejectedEvents: decoded.rejectedEvents))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                return .failure(AppServiceRejection(status: 400, errcode: MatrixErrorCode.notJSON, message: "Body is not valid JSON"))
            }
            return .failure(AppServiceRejection(status: 400, errcode: MatrixErrorCode.badJSON,
                                                message: "Body is not a transaction: \(DecodingErrorSummary.describe(error))"))
        } catch {
            return .failure(AppServiceRejection(status: 400, errcode: MatrixErrorCode.notJSON, message: "Body is not valid JSON"))
        }
    }
}
