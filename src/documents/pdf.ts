import type { DocumentView } from './invoice-document';

const MARGIN = 50;
const WIDTH = 595.28 - 2 * MARGIN; // A4
const GREY = '#555555';

/**
 * A document as a PDF (A4, PDFKit's built-in Helvetica: no font files, no browser), rendered in
 * memory: an invoice, a receipt or a credit note is a page or two. The text is laid out in
 * reading order (title, facts, lines, totals, transactions), so `pdftotext` reads it back whole.
 * `createdAt` fixes the document's own metadata date, so the same record renders the same bytes.
 */
export async function renderPdf(view: DocumentView, createdAt: Date): Promise<Buffer> {
  // PDFKit is loaded when a document is first asked for: loading it took ~100 ms of every
  // process's start (docs/performance.md, start-up).
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: {
      Title: `${view.title} ${view.number}`,
      Author: view.merchantName,
      Creator: 'stablecoin-billing',
      CreationDate: createdAt,
      ModDate: createdAt,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font('Helvetica-Bold').fontSize(20).text(view.merchantName, { width: WIDTH });
  doc.moveDown(0.3);
  doc.font('Helvetica').fontSize(14).fillColor(GREY).text(`${view.title} ${view.number}`);
  doc.fillColor('black').moveDown(0.8).fontSize(10);
  for (const [label, value] of view.facts) doc.text(`${label}: ${value}`);
  doc.moveDown(0.8).font('Helvetica-Bold').text('Billed to');
  doc.font('Helvetica');
  for (const line of view.billedTo) doc.text(line);

  doc.moveDown(1);
  const columns = [
    { x: MARGIN, width: WIDTH * 0.46 },
    { x: MARGIN + WIDTH * 0.46, width: WIDTH * 0.1 },
    { x: MARGIN + WIDTH * 0.56, width: WIDTH * 0.22 },
    { x: MARGIN + WIDTH * 0.78, width: WIDTH * 0.22 },
  ];
  const row = (cells: string[], bold = false) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica');
    const top = doc.y;
    let bottom = top;
    cells.forEach((cell, i) => {
      doc.text(cell, columns[i].x, top, {
        width: columns[i].width,
        align: i === 0 ? 'left' : 'right',
      });
      bottom = Math.max(bottom, doc.y);
    });
    doc.x = MARGIN;
    doc.y = bottom + 4;
  };
  row(['Description', 'Qty', 'Unit price', 'Amount'], true);
  doc
    .moveTo(MARGIN, doc.y - 2)
    .lineTo(MARGIN + WIDTH, doc.y - 2)
    .strokeColor('#cccccc')
    .stroke();
  for (const line of view.lines) row([line.description, line.quantity, line.unit, line.amount]);

  doc.moveDown(0.5);
  view.totals.forEach(([label, value], i) => {
    const bold = i === view.totals.length - 1;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica');
    const top = doc.y;
    doc.text(label, columns[2].x - WIDTH * 0.2, top, { width: WIDTH * 0.42, align: 'left' });
    doc.text(value, columns[3].x, top, { width: columns[3].width, align: 'right' });
    doc.x = MARGIN;
  });

  if (view.transfers.length > 0) {
    doc.moveDown(1.2).font('Helvetica-Bold').text('Transactions on Solana', MARGIN);
    doc.font('Helvetica').fontSize(9);
    for (const transfer of view.transfers) {
      doc.moveDown(0.3).text(`${transfer.label} ${transfer.amount}`);
      doc.fillColor(GREY).text(`Signature ${transfer.signature}`);
      doc.fillColor('#1a56db').text(transfer.link, { link: transfer.link, underline: false });
      doc.fillColor('black');
    }
    doc.fontSize(10);
  }

  doc.moveDown(1.5).fillColor(GREY).fontSize(9);
  for (const line of view.footer) doc.text(line, MARGIN, undefined, { width: WIDTH });
  doc.end();
  return done;
}
