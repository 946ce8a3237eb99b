/// The jigsaw piece: a square with a round tab on top and on the right and a round notch on the
/// left, as anti-aliased coverage (0...1) over a `size` x `size` box.
struct PuzzleShape {
    static let size = 50
    private static let body = (minX: 2.0, minY: 8.0, side: 40.0)
    private static let tabRadius = 7.0
    private static let notchRadius = 6.0

    /// Coverage per pixel, row-major, from 4x4 samples per pixel.
    let coverage: [Double]

    init() {
        let samples = 4
        var coverage = [Double](repeating: 0, count: Self.size * Self.size)
        for y in 0..<Self.size {
            for x in 0..<Self.size {
                var inside = 0
                for sy in 0..<samples {
                    for sx in 0..<samples {
                        let px = Double(x) + (Double(sx) + 0.5) / Double(samples)
                        let py = Double(y) + (Double(sy) + 0.5) / Double(samples)
                        if Self.contains(px, py) { inside += 1 }
                    }
                }
                coverage[y * Self.size + x] = Double(inside) / Double(samples * samples)
            }
        }
        self.coverage = coverage
    }

    private static func contains(_ x: Double, _ y: Double) -> Bool {
        func within(_ cx: Double, _ cy: Double, _ r: Double) -> Bool { (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r }
        let b = body
        let midX = b.minX + b.side / 2
        let midY = b.minY + b.side / 2
        if within(b.minX, midY, notchRadius) { return false }
        let inBody = x >= b.minX && x < b.minX + b.side && y >= b.minY && y < b.minY + b.side
        return inBody || within(midX, b.minY, tabRadius) || within(b.minX + b.side, midY, tabRadius)
    }

    func coverage(_ x: Int, _ y: Int) -> Double {
        guard x >= 0, y >= 0, x < Self.size, y < Self.size else { return 0 }
        return coverage[y * Self.size + x]
    }

    /// How much of the pixel lies on the shape's inner rim: what the outline is drawn with.
    func rim(_ x: Int, _ y: Int) -> Double {
        let inner = [coverage(x - 1, y), coverage(x + 1, y), coverage(x, y - 1), coverage(x, y + 1)].min() ?? 0
        return max(0, coverage(x, y) - inner)
    }
}
