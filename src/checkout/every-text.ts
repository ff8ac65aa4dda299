/** A plan's interval in words, after "every": "30 days", "day", "12 hours", "hour". */
export function everyText(seconds: number): string {
  if (seconds % 86_400 === 0) {
    const days = seconds / 86_400;
    return days === 1 ? 'day' : `${days} days`;
  }
  const hours = seconds / 3600;
  return hours === 1 ? 'hour' : `${hours} hours`;
}
