import qrcode from 'qrcode-generator';

/**
 * A QR code as inline SVG (no script, no request): the matrix from `qrcode-generator`, drawn as
 * one path of horizontal runs (a few KB, where the library's own SVG draws every module).
 */
export function qrSvg(text: string, label: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const size = qr.getModuleCount();
  const margin = 4;
  let path = '';
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size;) {
      if (!qr.isDark(row, col)) {
        col++;
        continue;
      }
      let run = 1;
      while (col + run < size && qr.isDark(row, col + run)) run++;
      path += `M${col + margin} ${row + margin}h${run}v1h-${run}z`;
      col += run;
    }
  }
  const box = size + margin * 2;
  const title = label.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${box} ${box}" role="img" ` +
    `shape-rendering="crispEdges" aria-label="${title}"><title>${title}</title>` +
    `<rect width="${box}" height="${box}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`
  );
}
