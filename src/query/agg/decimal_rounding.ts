// Rounding to a number of decimal places the way MongoDB's $round and $trunc do: on the decimal
// representation of the value (a double is first read as its 15 significant digits, as
// Decimal128(double) does), so $round: [2.675, 2] is 2.68 rather than 2.67.

export type RoundingMode = 'halfEven' | 'truncate';

interface DecimalParts {
  negative: boolean;
  mantissa: bigint;
  exponent: number;
}

function parseDecimal(text: string): DecimalParts | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (m === null) return undefined;
  const whole = m[2] ?? '';
  const fraction = m[3] ?? '';
  if (whole === '' && fraction === '') return undefined;
  return {
    negative: m[1] === '-',
    mantissa: BigInt(whole + fraction || '0'),
    exponent: Number(m[4] ?? '0') - fraction.length,
  };
}

// Returns the rounded value as decimal text, or undefined when the input is not finite.
export function roundDecimalText(text: string, place: number, mode: RoundingMode): string | undefined {
  const parts = parseDecimal(text);
  if (parts === undefined) return undefined;
  const target = -place;
  if (parts.exponent >= target) return text;
  const divisor = 10n ** BigInt(target - parts.exponent);
  let quotient = parts.mantissa / divisor;
  const remainder = parts.mantissa % divisor;
  if (mode === 'halfEven') {
    const twice = remainder * 2n;
    if (twice > divisor || (twice === divisor && quotient % 2n === 1n)) quotient += 1n;
  }
  const sign = parts.negative ? '-' : '';
  return `${sign}${quotient}E${target}`;
}

export function roundDouble(x: number, place: number, mode: RoundingMode): number {
  if (!Number.isFinite(x)) return x;
  const text = roundDecimalText(x.toPrecision(15), place, mode);
  const r = Number(text);
  // Keep the sign of a value that rounds to zero (MongoDB returns -0 for $round: [-0.1]).
  return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r;
}
