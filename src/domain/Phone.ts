// Phone numbers as senders and whitelist entries: one canonical, domestic (Korean) digit string,
// so `+82 10-1234-5678`, `010-1234-5678` and `01012345678` are one number.

const maxDigits = 20

/**
 * Canonical digits of a phone number, or `undefined` when it is not one.
 *
 * - everything but digits goes (spaces, `-`, `.`, `()`, `#`, `*`, a `tel:` scheme); full-width
 *   digits count as digits;
 * - the Korean country code becomes the domestic trunk prefix: `+82 10-1234-5678`,
 *   `82-10-1234-5678`, `0082…` → `01012345678`, `+82 2-…` → `02…` (a `(0)` after the code is
 *   not doubled: `+82 (0)10…` → `010…`; nationwide service numbers take no `0`:
 *   `+82 1588-9999` → `15889999`);
 * - other numbers keep all their digits (bank short numbers `1588-9999` → `15889999`, foreign
 *   numbers with their country code);
 * - `undefined` when no digit is left, when the input holds letters (an alphanumeric sender id
 *   such as `KB국민` or `Toss1234` is not a number, and its digits alone would be misleading),
 *   or when more than 20 digits remain.
 */
export const normalizePhone = (input: string): string | undefined => {
  const folded = input.normalize("NFKC").trim().replace(/^tel:/i, "")
  if (/\p{L}/u.test(folded)) return undefined
  const international = /^\+/.test(folded.replace(/^[\s(]+/, ""))
  const digits = folded.replace(/\D/g, "")
  if (digits.length === 0 || digits.length > maxDigits) return undefined
  return domestic(digits, international)
}

// Korean numbers after the country code are at least 7 digits (`2` + a 7-digit subscriber
// number for Seoul is the shortest landline); a bare `82…` shorter than that is not read as one.
const minNationalDigits = 7

const domestic = (digits: string, international: boolean): string => {
  const national = international && digits.startsWith("82")
    ? digits.slice(2)
    : digits.startsWith("0082")
    ? digits.slice(4)
    : !international && digits.startsWith("82") && digits.length - 2 >= minNationalDigits
    ? digits.slice(2)
    : undefined
  if (national === undefined || national.length === 0) return digits
  // Nationwide service numbers (`1588-xxxx`, `1644-xxxx`, …: 8 digits starting with 1) are
  // dialled without the trunk prefix; everything else takes it.
  if (national.startsWith("0") || /^1\d{7}$/.test(national)) return national
  return `0${national}`
}
