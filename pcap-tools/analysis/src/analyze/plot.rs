//! Sequence plots as SVG (`--svg`): to be written.

use super::report::{FlowTimeline, TimelineReport};
use super::series::Series;

/// One flow's PSN-versus-time plot.
pub fn flow_svg(flow: &FlowTimeline, series: &Series) -> String {
    let _ = (flow, series);
    String::new()
}

/// The capture-wide view: goodput per flow over time and the message completion time CDF.
pub fn overview_svg(report: &TimelineReport, series: &[Option<&Series>]) -> String {
    let _ = (report, series);
    String::new()
}
