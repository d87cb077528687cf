/// One item of what a sub-machine of the portal's returns, in order: an action for the ``Portal`` to perform, or a
/// request that only the portal machine's router can carry out (a change of the portal machine's own state, a step on
/// its agenda, a puppet made ready first). The router turns requests into its own state changes and actions, so a
/// request never reaches an effect and the effects' `switch` over a sub-machine's actions has no case to refuse.
enum SubMachineOutput<Action: Sendable & Equatable, Request: Sendable & Equatable>: Sendable, Equatable {
    case perform(Action)
    case portal(Request)
}
