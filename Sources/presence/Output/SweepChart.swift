import Foundation
import PresenceWire
import XMPPStream

/// The sweep as an SVG chart: loss rate (solid) and stale rate (dashed) of each evicting storage against the
/// limit on a log axis, with what the dictionary needs to keep everyone marked. Plain SVG: no script, no fonts to
/// fetch, readable in a browser and in a README.
enum SweepChart {
    static let width = 760.0
    static let height = 440.0
    private static let left = 70.0
    private static let right = 170.0
    private static let top = 56.0
    private static let bottom = 64.0
    private static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]

    static func svg(_ report: SweepReport, title input: String) -> String {
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        // What keeping everyone needs, on the same axis: every user for a count limit, the dictionary's bytes else.
        let marker = report.unit == "bytes" ? report.dictionaryEstimatedBytes : report.users
        let low = Double(max(1, min(report.values.first ?? 1, marker)))
        let high = Double(max(report.values.last ?? 1, marker, Int(low) + 1))
        func x(_ value: Int) -> Double { left + plotWidth * log(Double(value) / low) / log(high / low) }
        func y(_ rate: Double) -> Double { top + plotHeight * (1 - min(max(rate, 0), 1)) }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        func text(_ string: String) -> String { XMPPWriter.escaped(string) }

        var svg = [
            "<svg xmlns='http://www.w3.org/2000/svg' width='\(Int(width))' height='\(Int(height))' "
                + "viewBox='0 0 \(Int(width)) \(Int(height))' font-family='sans-serif' font-size='12'>",
            "<rect width='100%' height='100%' fill='white'/>",
            "<text x='\(number(width / 2))' y='22' text-anchor='middle' font-size='15' font-weight='bold'>"
                + text("Users lost by evicting storages against the \(report.parameter)") + "</text>",
            "<text x='\(number(width / 2))' y='40' text-anchor='middle' fill='#555'>"
                + text(
                    "\(input): \(Format.count(report.users)) users, \(Format.count(report.presenceUpdates)) updates")
                + "</text>",
        ]
        // Axes and grid: every 20% on y, the swept values on x (labels thinned where they would overlap).
        for step in 0 ... 5 {
            let rate = Double(step) / 5
            svg.append(
                "<line x1='\(number(left))' y1='\(number(y(rate)))' x2='\(number(left + plotWidth))' "
                    + "y2='\(number(y(rate)))' stroke='#e5e5e5'/>")
            svg.append(
                "<text x='\(number(left - 8))' y='\(number(y(rate) + 4))' text-anchor='end'>\(step * 20)%</text>")
        }
        var lastLabel = -Double.infinity
        let lastPosition = x(report.values.last ?? 1)
        for value in report.values {
            let position = x(value)
            svg.append(
                "<line x1='\(number(position))' y1='\(number(top + plotHeight))' x2='\(number(position))' "
                    + "y2='\(number(top + plotHeight + 5))' stroke='#333'/>")
            // The range's ends are always labelled; a label between is left out where it would overlap.
            let isLast = position == lastPosition
            guard position - lastLabel >= 56, isLast || lastPosition - position >= 56 else { continue }
            lastLabel = position
            svg.append(
                "<text x='\(number(position))' y='\(number(top + plotHeight + 20))' text-anchor='middle'>"
                    + text(SweepText.value(value, of: report)) + "</text>")
        }
        svg.append(
            "<rect x='\(number(left))' y='\(number(top))' width='\(number(plotWidth))' height='\(number(plotHeight))' "
                + "fill='none' stroke='#333'/>")
        svg.append(
            "<text x='\(number(left + plotWidth / 2))' y='\(number(height - 18))' text-anchor='middle'>"
                + text("\(report.parameter) (\(report.unit), log scale)") + "</text>")
        svg.append(
            "<text transform='translate(18 \(number(top + plotHeight / 2))) rotate(-90)' text-anchor='middle'>"
                + "share of users</text>")
        // The dictionary: nothing lost, at this cost.
        let markerX = x(marker)
        svg.append(
            "<line class='dictionary' x1='\(number(markerX))' y1='\(number(top))' x2='\(number(markerX))' "
                + "y2='\(number(top + plotHeight))' stroke='#555' stroke-dasharray='2 3'/>")
        svg.append(
            "<text x='\(number(markerX - 4))' y='\(number(top + 14))' text-anchor='end' fill='#555'>"
                + text("dictionary keeps all: \(SweepText.value(marker, of: report))") + "</text>")
        // One loss line and one stale line per storage, and the legend.
        for (index, series) in report.series.enumerated() {
            let color = colors[index % colors.count]
            let loss = series.points.map { "\(number(x($0.value))),\(number(y($0.lossRate)))" }
            let stale = series.points.map { "\(number(x($0.value))),\(number(y($0.staleRate)))" }
            let name = text(series.storage)
            // Earlier series are drawn wider, so that two storages losing the same users both stay visible.
            let strokeWidth = 2 + 2.5 * Double(report.series.count - 1 - index)
            svg.append(
                "<polyline class='loss' data-storage='\(name)' points='\(loss.joined(separator: " "))' "
                    + "fill='none' stroke='\(color)' stroke-width='\(number(strokeWidth))' stroke-opacity='0.85'/>")
            svg.append(
                "<polyline class='stale' data-storage='\(name)' points='\(stale.joined(separator: " "))' "
                    + "fill='none' stroke='\(color)' stroke-width='1.5' stroke-dasharray='6 4'/>")
            for point in series.points {
                svg.append(
                    "<circle cx='\(number(x(point.value)))' cy='\(number(y(point.lossRate)))' r='3' fill='\(color)'/>")
            }
            let legendY = top + 10 + Double(index) * 40
            let legendX = left + plotWidth + 16
            svg.append(
                "<line x1='\(number(legendX))' y1='\(number(legendY))' x2='\(number(legendX + 24))' "
                    + "y2='\(number(legendY))' stroke='\(color)' stroke-width='2'/>")
            svg.append(
                "<text x='\(number(legendX + 30))' y='\(number(legendY + 4))'>\(name) lost</text>")
            svg.append(
                "<line x1='\(number(legendX))' y1='\(number(legendY + 16))' x2='\(number(legendX + 24))' "
                    + "y2='\(number(legendY + 16))' stroke='\(color)' stroke-width='1.5' stroke-dasharray='6 4'/>")
            svg.append(
                "<text x='\(number(legendX + 30))' y='\(number(legendY + 20))'>\(name) stale</text>")
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }
}
