/// Keeps the event loops' connection counts close. Steering by CPU (CPUPlacement) can pile
/// connections onto one loop: a single-queue NIC, or every client on one core. The slack
/// is 4 connections or 1/8 of the busier loop's, whichever is larger.
enum LoopBalance {
    static func slack(_ busier: Int) -> Int { max(4, busier / 8) }

    /// The loop that takes a connection `own` just accepted: `own`, unless it is past the
    /// least-loaded loop by more than the slack.
    static func target(accepting own: Int, loops: Int, load: (Int) -> Int) -> Int {
        guard own < loops else { return own }
        let mine = load(own)
        var least = own, leastLoad = mine
        for i in 0..<loops {
            let l = load(i)
            if l < leastLoad { (least, leastLoad) = (i, l) }
        }
        return mine > leastLoad + slack(mine) ? least : own
    }

    /// Whether a connection may move from a loop holding `from` to one holding `to`:
    /// not when that would leave the receiving loop ahead by more than the slack.
    static func mayMove(from: Int, to: Int) -> Bool {
        (to + 1) - (from - 1) <= slack(to + 1)
    }
}
