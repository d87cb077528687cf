import IsthmusConfig
import IsthmusStore

extension StoreSynchronous {
    /// The store's setting for `database.synchronous`.
    public init(_ setting: Config.Database.Synchronous) {
        switch setting {
        case .normal: self = .normal
        case .full: self = .full
        }
    }
}
