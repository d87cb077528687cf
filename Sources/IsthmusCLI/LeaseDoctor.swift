import IsthmusCommon
import IsthmusStore

/// The active/standby part of `isthmus doctor`. Pure: a finding from the lease row.
enum LeaseDoctor {
    /// With `ha.enabled`: which instance holds the bridge lease (ok) or that none does (warn: no instance is active,
    /// or the active one died less than a lease ago). Without it, a lease still held means a pair member runs on this
    /// database (warn). Nothing when no `serve` ever took it.
    static func findings(_ state: LeaseState, haEnabled: Bool) -> [DoctorFinding] {
        guard let owner = state.owner else {
            return haEnabled ? [DoctorFinding(ok: true, check: "Bridge lease", detail: "no instance has taken it yet", warning: true)] : []
        }
        let remaining = state.expiresMs - state.databaseNowMs
        if state.isHeld {
            let detail = "held by \(owner) (epoch \(state.epoch)) for another \(seconds(remaining)) s: that instance is active"
            return [DoctorFinding(ok: true, check: "Bridge lease", detail: haEnabled ? detail : detail + ", but ha.enabled is off here",
                                  warning: !haEnabled)]
        }
        guard haEnabled else { return [] }
        return [DoctorFinding(ok: true, check: "Bridge lease",
                              detail: "free (last held by \(owner), epoch \(state.epoch), \(seconds(-remaining)) s ago): "
                                  + "no instance is active; a standby takes it within a second",
                              warning: true)]
    }

    /// Milliseconds as seconds with one decimal (`9.6`).
    static func seconds(_ milliseconds: Int64) -> String {
        let tenths = (max(milliseconds, 0) + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }
}
