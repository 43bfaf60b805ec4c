import Codecs
import HTTP
/// Renders a report as one self-contained HTML page: inline CSS and SVG, no
/// script, no network, no external asset, so it opens in any browser and can
/// be mailed as one file.
///
/// The page shows the path's observation points as lifelines and each
/// exchange as a sequence diagram row across them: the request left to right
/// above, the response right to left below, one arrow per hop coloured by
/// that message's verdict (`missing`: the arrow stops at a cross; `foreign`:
/// it starts from nowhere, dashed; on a `broken` hop, the messages that did
/// not cross whole in the broken colour). Beside each row, its notes (`HopResult.notes`) list every
/// difference. Each exchange is a `div` with `id="exchange-N"` and
/// `data-verdict`; each arrow carries `data-hop`, `data-message` and
/// `data-verdict`.
public enum HTMLReport {
    public static func render(_ report: VerificationReport) -> String {
        let geometry = Geometry(report.path)
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>Intact verification: \(escaped(TextReport.policyLine(report)))</title>
            <style>\(style)</style>
            </head>
            <body>
            <h1>Intact verification</h1>
            <p id="policy" class="\(report.policyHolds ? "holds" : "fails")">\(escaped(TextReport.policyLine(report)))</p>
            <p id="summary">\(escaped(TextReport.summaryLine(report.summary)))</p>

            """
        if let description = report.policy.description {
            html += "<p>Policy <b>\(escaped(report.policy.name))</b>: \(escaped(description))</p>\n"
        }
        html += list(report.policy.tolerations.map { "tolerates " + $0 }, id: "tolerations")
        html += list(report.problems.map { "Problem: " + $0.message }, id: "problems")
        html += list(report.warnings.map { "Warning: " + $0 }, id: "warnings")
        html += legend
        html += "<h2>Path</h2>\n" + list(report.path.hops.map { hop in
            "hop \(hop.number): \(hop.label) (\(hop.kind == .inside ? "what \(hop.from.tap) itself changed" : "network"))"
        }, id: "hops")

        let labelled = report.exchanges.contains { $0.step != nil }
        for group in report.stepGroups {
            html += "<section class=\"step\">\n"
            if labelled { html += "<h2>Step \(escaped(group.step?.rawValue ?? "(unlabelled)"))</h2>\n" }
            html += "<div class=\"row\">\(geometry.lifelineHeader(report.path))<div class=\"notes\"></div></div>\n"
            for exchange in group.exchanges { html += row(exchange, report.path.hops, geometry) }
            html += "</section>\n"
        }
        if let heading = TextReport.intermediaryHeading(report) {
            html += "<h2>\(escaped(heading))</h2>\n" + list(report.intermediaryRequests.lines, id: "intermediary-requests")
        }
        if let heading = TextReport.connectionsHeading(report) {
            html += "<h2>\(escaped(heading))</h2>\n" + list(report.connections.flatMap(\.lines), id: "connections")
        }
        html += "</body>\n</html>\n"
        return html
    }

    private static func row(_ exchange: VerifiedExchange, _ hops: [HopInfo], _ geometry: Geometry) -> String {
        var notes: [String] = []
        for (hop, info) in zip(exchange.hops, hops) {
            let prefix = escaped("hop \(info.number) (\(info.label))")
            notes += hop.notes(info).map { "<li data-hop=\"\(info.number)\">\(prefix): \(escaped($0))</li>" }
        }
        let inferred = zip(exchange.hops, hops).filter { $0.0.pairing == .inferred }.map { String($0.1.number) }
        let pairing = inferred.isEmpty ? "" : "<p class=\"trace\">hop\(inferred.count == 1 ? "" : "s") "
            + inferred.joined(separator: ", ") + " paired by sequence alignment (no shared trace id)</p>"
        let title = "#\(exchange.number) " + (exchange.client.map { "\($0): " } ?? "")
            + RequestLabel.line(exchange.method, exchange.target)
        return """
            <div class="row exchange" id="exchange-\(exchange.number)" data-verdict="\(exchange.verdict.rawValue)">
            \(geometry.diagram(exchange, hops))
            <div class="notes"><h3>\(escaped(title)) <span class="verdict \(exchange.verdict.rawValue)">\(exchange.verdict.rawValue)</span></h3>
            \(exchange.traceID.map { "<p class=\"trace\">trace \(escaped($0))</p>" } ?? "")\(pairing)
            <ul>\(notes.isEmpty ? "<li>identical on every hop</li>" : notes.joined())</ul></div>
            </div>

            """
    }

    private static func list(_ items: [String], id: String) -> String {
        guard !items.isEmpty else { return "" }
        return "<ul id=\"\(id)\">" + items.map { "<li>\(escaped($0))</li>" }.joined() + "</ul>\n"
    }

    /// The colour of each verdict; message outcomes share the names.
    static func colour(_ verdict: String) -> String {
        switch verdict {
        case "identical": return "#2e7d32"
        case "equivalent": return "#00897b"
        case "tolerated": return "#1565c0"
        case "modified": return "#e65100"
        case "missing": return "#6d4c41"
        case "foreign": return "#8e24aa"
        case "broken": return "#c62828"
        default: return "#bdbdbd"
        }
    }

    private static var legend: String {
        let items = HopVerdict.allCases.map { verdict in
            "<span class=\"verdict \(verdict.rawValue)\">\(verdict.rawValue)</span>"
        }
        return "<p id=\"legend\">Verdicts: " + items.joined(separator: " ") + "</p>\n"
    }

    private static var style: String {
        let verdicts = HopVerdict.allCases.map { ".verdict.\($0.rawValue){background:\(colour($0.rawValue))}" }.joined()
        return """
            body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#212121}\
            h1{margin:0 0 .3em}h2{margin:1.2em 0 .3em}h3{font-size:1em;margin:.2em 0;word-break:break-all}\
            #policy{font-weight:bold;font-size:1.2em}#policy.holds{color:#2e7d32}#policy.fails{color:#c62828}\
            .row{display:flex;align-items:flex-start;border-bottom:1px solid #eee}\
            .row svg{flex:none}.notes{flex:1;padding:.2em 1em;font-size:.9em}.notes ul{margin:.2em 0;padding-left:1.2em}\
            .trace{margin:0;color:#757575;font-size:.85em}\
            .verdict{color:#fff;border-radius:3px;padding:0 .4em;font-size:.85em;white-space:nowrap}\(verdicts)\
            svg text{font-family:inherit}
            """
    }
}

/// Where the lifelines and arrows go: one lifeline per observation point,
/// closer within one tap than across the network.
private struct Geometry {
    let xs: [Int]
    let width: Int
    static let rowHeight = 70

    init(_ path: VerifiedPath) {
        var xs = [80]
        for hop in path.hops { xs.append(xs[xs.count - 1] + (hop.kind == .inside ? 110 : 190)) }
        self.xs = xs
        width = xs[xs.count - 1] + 80
    }

    /// The observation points in order (the hops' ends).
    private func points(_ path: VerifiedPath) -> [ObservationPoint] {
        guard let first = path.hops.first else {
            return path.taps.first.map { [ObservationPoint(tap: $0.name, leg: $0.kind == .server ? .server : .client)] } ?? []
        }
        return [first.from] + path.hops.map(\.to)
    }

    func lifelineHeader(_ path: VerifiedPath) -> String {
        var svg = "<svg class=\"lanes\" width=\"\(width)\" height=\"44\" viewBox=\"0 0 \(width) 44\">"
        let points = points(path)
        var index = 0
        while index < points.count {
            let tap = points[index].tap
            var last = index
            while last + 1 < points.count && points[last + 1].tap == tap { last += 1 }
            let (left, right) = (xs[index], xs[last])
            svg += "<rect x=\"\(left - 60)\" y=\"2\" width=\"\(right - left + 120)\" height=\"22\" rx=\"4\" fill=\"#eceff1\"/>"
            svg += "<text x=\"\((left + right) / 2)\" y=\"18\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"13\">"
                + escaped(tap) + "</text>"
            if last > index {
                for point in index...last {
                    svg += "<text x=\"\(xs[point])\" y=\"38\" text-anchor=\"middle\" font-size=\"10\" fill=\"#616161\">"
                        + points[point].leg.rawValue + "</text>"
                }
            }
            index = last + 1
        }
        return svg + "</svg>"
    }

    func diagram(_ exchange: VerifiedExchange, _ hops: [HopInfo]) -> String {
        var svg = "<svg width=\"\(width)\" height=\"\(Geometry.rowHeight)\" viewBox=\"0 0 \(width) \(Geometry.rowHeight)\">"
        for x in xs {
            svg += "<line x1=\"\(x)\" y1=\"0\" x2=\"\(x)\" y2=\"\(Geometry.rowHeight)\" stroke=\"#b0bec5\" stroke-width=\"1\"/>"
        }
        for (offset, (hop, info)) in zip(exchange.hops, hops).enumerated() {
            let (near, far) = (xs[offset], xs[offset + 1])
            let tooltip = escaped(([info.label] + hop.notes(info)).joined(separator: "\n"))
            svg += arrow(hop, hop.request, "request", from: near, to: far, y: 22, number: info.number, tooltip: tooltip)
            svg += arrow(hop, hop.response, "response", from: far, to: near, y: 52, number: info.number, tooltip: tooltip)
        }
        return svg + "</svg>"
    }

    /// One message across one hop, from the side it leaves to the side it
    /// reaches. On a broken hop, a message that did not cross whole (absent,
    /// missing, foreign or incomplete) is drawn in the broken colour, one
    /// that did keeps its own; an absent one is a stub ending in a cross.
    private func arrow(_ hop: HopResult, _ result: MessageResult, _ message: String, from: Int, to: Int, y: Int,
                       number: Int, tooltip: String) -> String {
        let crossedWhole = result.outcome > .notReached && result.outcome < .missing
            && result.before?.complete != false && result.after?.complete != false
        guard result.outcome != .notReached || hop.verdict == .broken else { return "" }
        let verdict = hop.verdict == .broken && !crossedWhole ? "broken" : result.outcome.rawValue
        let colour = HTMLReport.colour(verdict)
        let middle = (from + to) / 2
        let direction = to > from ? 1 : -1
        var start = from, end = to, dash = ""
        let shapes: String
        switch result.outcome {
        case .missing, .notReached, .broken:
            end = middle
            shapes = "<path d=\"M\(end - 5) \(y - 5)L\(end + 5) \(y + 5)M\(end - 5) \(y + 5)L\(end + 5) \(y - 5)\" "
                + "stroke=\"\(colour)\" stroke-width=\"2.5\"/>"
        case .foreign:
            start = middle
            dash = " stroke-dasharray=\"5 3\""
            shapes = head(at: end, y: y, direction: direction, colour: colour)
        default:
            shapes = head(at: end, y: y, direction: direction, colour: colour)
        }
        // A fault marks the arrows it may have caused: those not identical, or both when both are.
        let injected = !hop.injected.isEmpty
            && (result.outcome != .identical || (hop.request.outcome == .identical && hop.response.outcome == .identical))
        let label = verdict + (injected ? " (injected)" : "")
        return "<g class=\"arrow\" data-hop=\"\(number)\" data-message=\"\(message)\" data-verdict=\"\(verdict)\">"
            + "<title>\(tooltip)</title>"
            + "<line x1=\"\(start)\" y1=\"\(y)\" x2=\"\(end - direction * 8)\" y2=\"\(y)\" stroke=\"\(colour)\" stroke-width=\"2.5\"\(dash)/>"
            + shapes
            + "<text x=\"\((start + end) / 2)\" y=\"\(y - 6)\" text-anchor=\"middle\" font-size=\"10\" fill=\"\(colour)\">"
            + escaped(label) + "</text></g>"
    }

    private func head(at x: Int, y: Int, direction: Int, colour: String) -> String {
        let back = x - direction * 9
        return "<polygon points=\"\(x),\(y) \(back),\(y - 5) \(back),\(y + 5)\" fill=\"\(colour)\"/>"
    }
}

/// HTML-escaped text (`String.htmlEscaped`), short for the many interpolations above.
private func escaped(_ text: String) -> String { text.htmlEscaped }
