//! One line chart as SVG, drawn by plotters' SVG backend: axes with their units, a mark on
//! every point (so a one-point line shows), a legend, and a note in the plot when there is
//! nothing to draw. The chart keeps its data ranges and the pixel box of its plot, written
//! beside the SVG in the page, so a reader (the tests) can map the drawn lines back to data.
//! design: eval.report

use plotters::prelude::*;

/// One line: a name for the legend, a colour, and (x, y) points in data units.
pub(in crate::commands) struct Line {
    pub(in crate::commands) name: String,
    pub(in crate::commands) color: RGBColor,
    pub(in crate::commands) points: Vec<(f64, f64)>,
}

/// What to draw.
pub(in crate::commands) struct Spec<'a> {
    pub(in crate::commands) title: &'a str,
    /// The x axis' title, with its unit.
    pub(in crate::commands) x_desc: &'a str,
    pub(in crate::commands) y_desc: &'a str,
    /// How a y value is labelled on its axis.
    pub(in crate::commands) y_format: fn(f64) -> String,
    /// The y axis ends here at least (100 for a percentage).
    pub(in crate::commands) y_floor_max: f64,
    /// Counts: the axis ends on a whole number and its labels are whole numbers.
    pub(in crate::commands) integer: bool,
    pub(in crate::commands) lines: Vec<Line>,
    /// Said instead of a chart when there is nothing to draw: no point, or (with
    /// `zero_is_nothing`) only zeros.
    pub(in crate::commands) nothing: &'a str,
    pub(in crate::commands) zero_is_nothing: bool,
    /// Marks only, no line between them (a scatter: points that are not a series in time).
    pub(in crate::commands) marks_only: bool,
}

/// A drawn chart.
pub(in crate::commands) struct Chart {
    pub(in crate::commands) svg: String,
    pub(in crate::commands) x: (f64, f64),
    pub(in crate::commands) y: (f64, f64),
    /// The plot's pixel box: left, top, right, bottom.
    pub(in crate::commands) plot: (i32, i32, i32, i32),
    /// Name and colour of each line, in legend order.
    pub(in crate::commands) legend: Vec<(String, String)>,
    pub(in crate::commands) title: String,
    /// In words, when there is nothing to draw: the page shows this instead.
    pub(in crate::commands) nothing: Option<String>,
}

impl Chart {
    /// Where the data point `(x, y)` is drawn, in the SVG's pixels.
    pub(in crate::commands) fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let (l, t, r, b) = self.plot;
        let fx = (x - self.x.0) / (self.x.1 - self.x.0).max(f64::MIN_POSITIVE);
        let fy = (y - self.y.0) / (self.y.1 - self.y.0).max(f64::MIN_POSITIVE);
        (
            f64::from(l) + fx * f64::from(r - l),
            f64::from(b) - fy * f64::from(b - t),
        )
    }

    /// Adds `svg` (elements) on top of the drawing.
    pub(in crate::commands) fn overlay(&mut self, svg: &str) {
        if let Some(at) = self.svg.rfind("</svg>") {
            self.svg.insert_str(at, svg);
        }
    }
}

const SIZE: (u32, u32) = (720, 380);

/// Colours that stay apart on white (Tableau 10).
pub(in crate::commands) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(in crate::commands) fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Draws `spec`. A drawing error (none is expected from the SVG backend) leaves what was
/// drawn and says so in the chart's title.
pub(in crate::commands) fn draw(spec: &Spec<'_>) -> Chart {
    let mut all = spec.lines.iter().flat_map(|l| l.points.iter());
    let nothing = match all.clone().next() {
        None => true,
        Some(_) => spec.zero_is_nothing && all.all(|(_, y)| *y == 0.0),
    };
    let all = spec.lines.iter().flat_map(|l| l.points.iter());
    let (mut x_max, mut y_max) = (0.0f64, 0.0f64);
    for (x, y) in all {
        x_max = x_max.max(*x);
        y_max = y_max.max(*y);
    }
    // One point at 0, or nothing: the axes still span something readable.
    let x = (0.0, if x_max > 0.0 { x_max * 1.05 } else { 1.0 });
    let mut top = (y_max * 1.1).max(spec.y_floor_max);
    if spec.integer {
        top = top.ceil().max(1.0);
    }
    let y = (0.0, if top > 0.0 { top } else { 1.0 });
    let mut svg = String::new();
    let mut plot = (0, 0, 0, 0);
    let drawn = render(spec, x, y, &mut svg, &mut plot);
    if let Err(e) = drawn {
        tracing::warn!(chart = spec.title, error = %e, "a chart could not be drawn whole");
    }
    Chart {
        svg,
        x,
        y,
        plot,
        legend: spec
            .lines
            .iter()
            .map(|l| (l.name.clone(), hex(l.color)))
            .collect(),
        title: spec.title.to_owned(),
        nothing: nothing.then(|| spec.nothing.to_owned()),
    }
}

type Drawn = Result<(), Box<dyn std::error::Error>>;

fn render(
    spec: &Spec<'_>,
    x: (f64, f64),
    y: (f64, f64),
    svg: &mut String,
    plot: &mut (i32, i32, i32, i32),
) -> Drawn {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(spec.title, ("sans-serif", 18))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
    let y_format = spec.y_format;
    let y_labels = if spec.integer {
        (y.1 as usize + 1).min(11)
    } else {
        11
    };
    let x_span = x.1 - x.0;
    chart
        .configure_mesh()
        .x_desc(spec.x_desc)
        .y_desc(spec.y_desc)
        .y_labels(y_labels)
        .x_label_formatter(&|v| axis_number(*v, x_span))
        .y_label_formatter(&|v| y_format(*v))
        .light_line_style(RGBColor(236, 236, 236))
        .draw()?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    *plot = (px.start, py.start, px.end, py.end);
    let drawable: Vec<&Line> = spec.lines.iter().filter(|l| !l.points.is_empty()).collect();
    if drawable.is_empty() {
        let style = ("sans-serif", 16)
            .into_font()
            .color(&RGBColor(110, 110, 110));
        let at = ((px.start + px.end) / 2 - 60, (py.start + py.end) / 2);
        root.draw(&Text::new("no points yet", at, style))?;
        root.present()?;
        return Ok(());
    }
    for line in drawable {
        let color = line.color;
        let width = if spec.marks_only { 0 } else { 2 };
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                color.stroke_width(width),
            ))?
            .label(line.name.as_str())
            .legend(move |(lx, ly)| {
                PathElement::new(vec![(lx, ly), (lx + 18, ly)], color.stroke_width(3))
            });
        chart.draw_series(
            line.points
                .iter()
                .map(|p| Circle::new(*p, if spec.marks_only { 6 } else { 3 }, color.filled())),
        )?;
    }
    // A scatter's marks sit high on the left as often as anywhere: its legend goes low.
    let corner = if spec.marks_only {
        SeriesLabelPosition::LowerRight
    } else {
        SeriesLabelPosition::UpperLeft
    };
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}

/// A label of an axis `span` long: whole numbers on a long axis, tenths or hundredths on a
/// short one, so neighbouring labels differ.
fn axis_number(v: f64, span: f64) -> String {
    if span >= 20.0 {
        format!("{v:.0}")
    } else if span >= 2.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
