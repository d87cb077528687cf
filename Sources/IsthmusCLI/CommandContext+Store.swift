import Bridge
import IsthmusCommon
import IsthmusConfig
import IsthmusStore

extension CommandContext {
    /// Opens the config's store (applying migrations); a failure becomes a one-line ``CommandFailure``.
    func openStore(_ config: Config) throws(CommandFailure) -> Store {
        do {
            return try Store(location: config.database.location, synchronous: StoreSynchronous(config.database.synchronous),
                             logger: logger(config, label: "store"))
        } catch {
            throw CommandFailure("cannot open the database \(config.database.location): \(error)")
        }
    }
}
