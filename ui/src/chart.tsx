/** A line chart drawn as SVG by hand: one line per series over days, a circle per data point with its value. */
export interface Series {
  name: string;
  /** day (YYYY-MM-DD) -> value */
  points: Map<string, number>;
}

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f'];
const WIDTH = 720;
const HEIGHT = 240;
const PAD = { left: 64, right: 16, top: 12, bottom: 36 };

export const seriesColor = (index: number) => PALETTE[index % PALETTE.length]!;

export function LineChart({ title, days, series, format }: { title: string; days: string[]; series: Series[]; format: (value: number) => string }) {
  const max = Math.max(0, ...series.flatMap((s) => [...s.points.values()]));
  const top = max > 0 ? max * 1.1 : 1;
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (days.length <= 1 ? plotWidth / 2 : (i * plotWidth) / (days.length - 1));
  const y = (value: number) => PAD.top + plotHeight - (value / top) * plotHeight;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((share) => share * top);
  // At most about 8 day labels, evenly spaced.
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%" role="img" aria-label={title}>
        <title>{title}</title>
        {ticks.map((tick) => (
          <g class="tick">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(tick)} y2={y(tick)} stroke="#e5e7eb" />
            <text x={PAD.left - 6} y={y(tick) + 4} text-anchor="end" font-size="11" fill="#4b5563">{format(tick)}</text>
          </g>
        ))}
        {days.map((day, i) => (i % labelEvery === 0 ? <text x={x(i)} y={HEIGHT - 12} text-anchor="middle" font-size="11" fill="#4b5563">{day.slice(5)}</text> : null))}
        {series.map((s, index) => {
          const color = seriesColor(index);
          const present = days.map((day, i) => [i, s.points.get(day)] as const).filter((p): p is readonly [number, number] => p[1] !== undefined);
          return (
            <g class="series" data-series={s.name}>
              {present.length > 1 ? <polyline fill="none" stroke={color} stroke-width="2" points={present.map(([i, v]) => `${x(i)},${y(v)}`).join(' ')} /> : null}
              {present.map(([i, v]) => (
                <circle class="point" data-day={days[i]} data-series={s.name} data-value={String(v)} cx={x(i)} cy={y(v)} r="4" fill={color}>
                  <title>{`${s.name}, ${days[i]}: ${format(v)}`}</title>
                </circle>
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {title}
        <ul class="legend">
          {series.map((s, index) => (
            <li>
              <svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={seriesColor(index)} /></svg> {s.name}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
