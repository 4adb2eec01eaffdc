/** Small pieces every page uses: loading a resource, showing an error, a table of records. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorText } from './api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and on reload(); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => { if (current) { setData(value); setError(null); setLoading(false); } },
      (err) => { if (current) { setError(errorText(err)); setLoading(false); } },
    );
    return () => { current = false; };
  }, [round, ...deps]);
  return { data, error, loading, reload: useCallback(() => setRound((n) => n + 1), []) };
}

export function ErrorMessage({ text }: { text: string | null }) {
  if (!text) return null;
  return <p class="error" role="alert">{text}</p>;
}

export function Notice({ text }: { text: string | null }) {
  if (!text) return null;
  return <p class="notice" role="status">{text}</p>;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
}

export function Table<T>({ rows, columns, label, empty = 'Nothing yet.' }: { rows: T[]; columns: Column<T>[]; label: string; empty?: string }) {
  if (rows.length === 0) return <p>{empty}</p>;
  return (
    <table aria-label={label}>
      <thead><tr>{columns.map((c) => <th scope="col">{c.title}</th>)}</tr></thead>
      <tbody>{rows.map((row) => <tr>{columns.map((c) => <td>{c.cell(row)}</td>)}</tr>)}</tbody>
    </table>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '—');
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  // Test and small-model traffic costs fractions of a cent: keep its significant digits.
  if (value !== 0 && Math.abs(value) < 0.01) return `$${value.toPrecision(2)}`;
  return `$${value.toFixed(Math.abs(value) < 1 ? 4 : 2)}`;
}
/** "a, b" -> ['a', 'b']; blanks dropped. */
export const splitList = (text: string) => text.split(',').map((part) => part.trim()).filter(Boolean);
