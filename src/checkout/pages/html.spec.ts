import { escapeHtml, html } from './html';

describe('html', () => {
  it('escapes every interpolated value, in text and attributes', () => {
    const label = `<script>alert("x")</script>' onload='x`;
    const out = html`<p title="${label}">${label}</p>`.toString();
    expect(out).not.toContain('<script>');
    expect(out).not.toContain(`"x"`);
    expect(out).toBe(
      `<p title="${escapeHtml(label)}">&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;&#39; onload&#61;&#39;x</p>`,
    );
  });

  it('nests fragments without escaping them twice, and drops empty values', () => {
    const items = ['a&b', 'c'].map((x) => html`<li>${x}</li>`);
    const list = html`<ul>${items}${null}${false}${undefined}</ul>`; // prettier-ignore
    expect(list.toString()).toBe('<ul><li>a&#38;b</li><li>c</li></ul>');
  });
});
