//! The `simulate --timeline --chart out.svg` picture: nodes (top) and cost per hour (bottom)
//! over time, one line per strategy, load changes as grey verticals and each strategy's
//! milestones marked (● first wave Running, ▲ back to zero). Drawn with plotters' SVG backend
//! only, so the text stays text and no font is loaded.

use plotters::prelude::*;

use crate::sim::engine::{StrategyTimeline, Timeline};

/// Width and height of the picture, in pixels.
pub const SIZE: (u32, u32) = (960, 620);

/// The line color of a strategy (the same in both panels and the legend).
pub fn color_of(strategy: &str) -> RGBColor {
    match strategy {
        "cost" => RGBColor(0x1f, 0x77, 0xb4),
        "karpenter-capi" => RGBColor(0xd6, 0x27, 0x28),
        _ => RGBColor(0x2c, 0xa0, 0x2c),
    }
}

/// The series as a step function over (x in display units, value), ending at the horizon.
fn steps(
    s: &StrategyTimeline,
    unit: f64,
    horizon: f64,
    value: impl Fn(usize) -> f64,
) -> Vec<(f64, f64)> {
    let mut out = vec![(0.0, 0.0)];
    let mut last = 0.0;
    for (i, p) in s.series.iter().enumerate() {
        let x = p.t / unit;
        let v = value(i);
        out.push((x, last));
        out.push((x, v));
        last = v;
    }
    out.push((horizon / unit, last));
    out
}

/// The value of a series at a time (seconds).
fn value_at(s: &StrategyTimeline, t: f64, f: impl Fn(usize) -> f64) -> f64 {
    s.series
        .iter()
        .enumerate()
        .take_while(|(_, p)| p.t <= t)
        .last()
        .map_or(0.0, |(i, _)| f(i))
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    t: &Timeline,
    unit: (f64, &str),
    title: &str,
    y_desc: &str,
    value: &dyn Fn(&StrategyTimeline, usize) -> f64,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let horizon = t.horizon_seconds.max(1.0);
    let ymax = t
        .strategies
        .iter()
        .flat_map(|s| (0..s.series.len()).map(move |i| value(s, i)))
        .fold(0.0_f64, f64::max);
    let ymax = if ymax <= 0.0 { 1.0 } else { ymax * 1.15 };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..horizon / unit.0, 0.0..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(format!("time ({})", unit.1))
        .y_desc(y_desc)
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(e)?;
    // Load changes: where the trace added or removed pods.
    let grey = RGBColor(0x99, 0x99, 0x99);
    chart
        .draw_series(t.steps.iter().map(|x| {
            PathElement::new(
                vec![(x / unit.0, 0.0), (x / unit.0, ymax)],
                grey.stroke_width(1),
            )
        }))
        .map_err(e)?;
    for s in &t.strategies {
        let color = color_of(s.strategy);
        let points = steps(s, unit.0, horizon, |i| value(s, i));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(e)?
            .label(s.strategy)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        let f = |i: usize| value(s, i);
        if let Some(r) = s.milestones.running {
            let y = value_at(s, r, f);
            chart
                .draw_series(std::iter::once(Circle::new(
                    (r / unit.0, y),
                    4,
                    color.filled(),
                )))
                .map_err(e)?;
        }
        if let (Some(z), Some(removed)) = (s.milestones.scaled_to_zero, t.steps.last()) {
            chart
                .draw_series(std::iter::once(TriangleMarker::new(
                    ((removed + z) / unit.0, 0.0),
                    6,
                    color.filled(),
                )))
                .map_err(e)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0xcc, 0xcc, 0xcc))
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Draws the timeline as an SVG document.
pub fn svg(t: &Timeline) -> Result<String, String> {
    let unit = if t.horizon_seconds <= 3.0 * 3600.0 {
        (60.0, "minutes")
    } else {
        (3600.0, "hours")
    };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root
            .titled(
                &format!(
                    "simulate --timeline: trace {} (● first wave Running, ▲ back to zero)",
                    t.trace
                ),
                ("sans-serif", 16),
            )
            .map_err(|e| e.to_string())?;
        let (top, bottom) = root.split_vertically(SIZE.1 / 2 - 10);
        panel(&top, t, unit, "Nodes", "nodes", &|s, i| {
            s.series[i].nodes as f64
        })?;
        panel(
            &bottom,
            t,
            unit,
            "Cost per hour",
            "cost per hour",
            &|s, i| s.series[i].price_per_hour,
        )?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::{Source, snapshot_from_sources};
    use crate::sched::strategy::StrategyName;
    use crate::sim::{replay_all, trace};

    fn timeline() -> Timeline {
        let trace = trace::built_in("seed-benchmark").unwrap();
        let snap = snapshot_from_sources(&[Source {
            name: "s".into(),
            text: trace::built_in_scenario("seed-benchmark").unwrap().into(),
        }])
        .unwrap();
        replay_all(&snap, &trace, &StrategyName::ALL, &mut |_, _, _| {}).unwrap()
    }

    #[test]
    fn the_chart_is_valid_svg_with_one_series_per_strategy_and_labelled_axes() {
        let t = timeline();
        let svg = svg(&t).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("valid XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect();
        let count = |s: &str| texts.iter().filter(|t| *t == s).count();
        // Both panels: axes described, titled, and a legend naming every strategy.
        assert_eq!(count("time (minutes)"), 2, "{texts:?}");
        assert_eq!(count("nodes"), 1);
        assert_eq!(count("cost per hour"), 1);
        assert_eq!(count("Nodes"), 1);
        assert_eq!(count("Cost per hour"), 1);
        for s in StrategyName::ALL {
            assert_eq!(count(s.as_str()), 2, "{} in {texts:?}", s.as_str());
            // One line per panel plus its legend sample, in the strategy's color.
            let c = color_of(s.as_str());
            let stroke = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            let lines: Vec<_> = doc
                .descendants()
                .filter(|n| {
                    n.has_tag_name("polyline") && n.attribute("stroke") == Some(stroke.as_str())
                })
                .collect();
            assert_eq!(lines.len(), 4, "{}", s.as_str());
            // The series itself goes through the strategy's peak node count.
            let longest = lines
                .iter()
                .map(|l| {
                    l.attribute("points")
                        .unwrap_or("")
                        .split_whitespace()
                        .count()
                })
                .max()
                .unwrap();
            assert!(longest >= 4, "{}: {longest} points", s.as_str());
        }
        // The first-wave-Running markers: one circle per strategy and panel.
        assert_eq!(
            doc.descendants()
                .filter(|n| n.has_tag_name("circle"))
                .count(),
            6
        );
    }

    #[test]
    fn long_replays_are_drawn_in_hours() {
        let mut t = timeline();
        t.horizon_seconds = 24.0 * 3600.0;
        let svg = svg(&t).unwrap();
        assert!(svg.contains("time (hours)"));
        assert!(!svg.contains("time (minutes)"));
    }
}
