import Foundation
import GatehouseCore

/// A repeatable generator (SplitMix64), so that puzzles and drags can be compared across runs.
public struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

public enum DragSamples {
    /// A drag as a hand makes it: a minimum-jerk reach with tremor that overshoots the target by a
    /// few pixels, then a slower correction back, sampled unevenly with a vertical wobble.
    public static func human(to target: Double, points: Int = 30, milliseconds: Double = 900) -> [DragPoint] {
        var generator = SeededGenerator(state: 7)
        let overshoot = min(6, max(2.5, target * 0.03))
        let reach = max(6, points * 3 / 4)
        var trajectory = [DragPoint(x: 0, y: 0, t: 0)]
        var y = 0.0
        func add(_ x: Double, _ t: Double) {
            y += Double(Int.random(in: -1...1, using: &generator)) * 0.6
            trajectory.append(DragPoint(x: max(0, x), y: y, t: max(trajectory.last!.t + 3, t + Double.random(in: -5...5, using: &generator))))
        }
        for i in 1...reach {
            let u = Double(i) / Double(reach)
            let profile = 10 * pow(u, 3) - 15 * pow(u, 4) + 6 * pow(u, 5)
            add((target + overshoot) * profile + Double.random(in: -0.8...0.8, using: &generator), milliseconds * 0.7 * u)
        }
        let back = max(2, points - reach)
        for i in 1...back {
            add(target + overshoot * (1 - Double(i) / Double(back)), milliseconds * (0.7 + 0.3 * Double(i) / Double(back)))
        }
        trajectory[trajectory.count - 1] = DragPoint(x: target, y: y + 0.5, t: trajectory.last!.t)
        return trajectory
    }

    /// What a short script sends: a cubic ease-out straight onto the target with a little vertical
    /// noise and uneven timing, and no correction at the end (the drag the attack run passed with).
    public static func easedScript(to target: Double, points: Int = 30, milliseconds: Double = 900) -> [DragPoint] {
        var generator = SeededGenerator(state: 11)
        var trajectory = [DragPoint(x: 0, y: 0, t: 0)]
        var y = 0.0
        for i in 1...points {
            let u = Double(i) / Double(points)
            y += Double(Int.random(in: -1...1, using: &generator)) * 0.6
            let jitter = Double.random(in: -6...6, using: &generator)
            trajectory.append(DragPoint(x: target * (1 - pow(1 - u, 3)), y: y, t: max(trajectory.last!.t + 1, milliseconds * u + jitter)))
        }
        trajectory[trajectory.count - 1] = DragPoint(x: target, y: y + 0.5, t: trajectory.last!.t)
        return trajectory
    }
}
