// A customer CSV of `rows` rows for the import benchmark: every customer field, a custom field column
// (VIP level, SELECT) on a tenth of the rows, national French phone spellings, a quoted note with a
// comma on some rows. Deterministic. Row i has external_id crm-<i>, email guest<i>@example.com.
export function importCsv(rows: number, offset = 0): string {
  const lines = ['name,email,phone_number,lang,external_id,tags,note,newsletter_consent,VIP level'];
  for (let k = 0; k < rows; k++) {
    const i = k + offset;
    const n = String(i).padStart(8, '0');
    lines.push(
      [
        `Guest ${i}`,
        `guest${i}@example.com`,
        `06 ${n.slice(0, 2)} ${n.slice(2, 4)} ${n.slice(4, 6)} ${n.slice(6, 8)}`,
        i % 3 === 0 ? 'en' : 'FR',
        `crm-${i}`,
        i % 10 === 0 ? 'vip|regular' : '',
        i % 7 === 0 ? '"Allergic to nuts, prefers terrace"' : '',
        i % 2 === 0 ? 'yes' : 'no',
        i % 10 === 0 ? 'gold' : '',
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
