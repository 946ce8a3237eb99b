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
    /// A drag as a hand makes it: easing out towards `target`, wobbling, sampled unevenly.
    public static func human(to target: Double, points: Int = 30, milliseconds: Double = 900) -> [DragPoint] {
        var generator = SeededGenerator(state: 7)
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
