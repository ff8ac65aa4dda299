import { validate } from 'class-validator';
import { charCount, MaxLength, MinLength } from './chars';

class Label {
  @MinLength(1)
  @MaxLength(3)
  label!: string;
}

const check = async (label: string) => {
  const dto = Object.assign(new Label(), { label });
  return (await validate(dto)).flatMap((e) => Object.keys(e.constraints ?? {}));
};

describe('charCount', () => {
  it('counts code points, as PostgreSQL counts a varchar', () => {
    expect(charCount('abc')).toBe(3);
    expect(charCount('😀')).toBe(1); // a surrogate pair
    expect(charCount('❤\uFE0F')).toBe(2); // a variation selector is a character
    expect(charCount('\uD800')).toBe(1); // a lone surrogate (refused elsewhere) still counts once
    expect(charCount('')).toBe(0);
  });
});

describe('MaxLength / MinLength (characters as the database counts them)', () => {
  it('refuses what class-validator would let through: variation selectors count', async () => {
    expect(await check('ab\uFE0F')).toEqual([]);
    expect(await check('abc\uFE0F')).toEqual(['maxLength']);
    expect(await check('😀😀😀')).toEqual([]);
    expect(await check('')).toEqual(['minLength']);
  });
});
