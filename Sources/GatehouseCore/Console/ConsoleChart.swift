import Foundation

/// The geometry of the overview's charts, worked out here and drawn as SVG by the page: no script
/// and no chart library, so the console works offline and renders the same in every browser.
public enum ConsoleChart {
    public struct Bar: Equatable, Sendable {
        public let x: Double
        public let y: Double
        public let width: Double
        public let height: Double
        public let series: String
        /// What a pointer over the bar shows.
        public let title: String
    }

    /// Bars stacked per bucket, series in the given order from the bottom, heights as a rate per
    /// minute so that windows of any width read alike; the tallest stack fills `height`.
    public static func stacked(
        _ buckets: [[String: Int]],
        series: [String],
        bucketMinutes: Double,
        width: Double,
        height: Double,
        label: (Int) -> String
    ) -> (bars: [Bar], peakPerMinute: Double) {
        let totals = buckets.map { bucket in series.reduce(0) { $0 + (bucket[$1] ?? 0) } }
        let peak = Double(totals.max() ?? 0) / bucketMinutes
        guard peak > 0, !buckets.isEmpty else { return ([], 0) }
        let slot = width / Double(buckets.count)
        let scale = height / peak
        var bars: [Bar] = []
        for (index, bucket) in buckets.enumerated() {
            var top = height
            for name in series {
                let count = bucket[name] ?? 0
                guard count > 0 else { continue }
                let barHeight = Double(count) / bucketMinutes * scale
                top -= barHeight
                bars.append(
                    Bar(
                        x: Double(index) * slot + slot * 0.1,
                        y: top,
                        width: slot * 0.8,
                        height: barHeight,
                        series: name,
                        title: "\(label(index)): \(count) \(name)"
                    )
                )
            }
        }
        return (bars, peak)
    }

    /// A ranking's bars: each value's share of the largest, as a width within `width`.
    public static func ranked(_ items: [(label: String, count: Int)], width: Double) -> [(label: String, count: Int, width: Double)] {
        let largest = Double(items.map(\.count).max() ?? 0)
        guard largest > 0 else { return [] }
        return items.map { ($0.label, $0.count, max(1, Double($0.count) / largest * width)) }
    }
}
