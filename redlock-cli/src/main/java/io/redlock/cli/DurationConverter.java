package io.redlock.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a positive duration from the command line: a whole number with a unit ({@code 500ms},
 * {@code 30s}, {@code 5m}, {@code 1h}) or ISO-8601 ({@code PT30S}, {@code PT1M30S}).
 *
 * <p>A value it cannot read is refused with a {@link TypeConversionException}, which picocli
 * reports as {@code Invalid value for option '--duration': ...}, naming the option.
 */
public final class DurationConverter implements ITypeConverter<Duration> {

  /** The accepted forms, for error messages and help texts. */
  static final String FORMATS = "use e.g. 500ms, 30s, 5m or ISO-8601 such as PT30S";

  private static final Pattern WITH_UNIT = Pattern.compile("(\\d{1,18})(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    Duration duration = parse(value.trim());
    if (duration == null) {
      throw new TypeConversionException("'" + value + "' is not a duration; " + FORMATS);
    }
    if (duration.isZero() || duration.isNegative()) {
      throw new TypeConversionException("'" + value + "' is not accepted: it must be more than 0");
    }
    return duration;
  }

  /** Shows a duration the way it is typed: {@code 500ms}, {@code 30s}, {@code 5m}. */
  static String format(Duration d) {
    if (d.toNanos() % 1_000_000 != 0) {
      return d.toString();
    }
    if (d.toMillis() % 1_000 != 0) {
      return d.toMillis() + "ms";
    }
    long seconds = d.toSeconds();
    if (seconds > 0 && seconds % 3_600 == 0) {
      return seconds / 3_600 + "h";
    }
    return seconds > 0 && seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
  }

  private static Duration parse(String value) {
    String lower = value.toLowerCase(Locale.ROOT);
    Matcher matcher = WITH_UNIT.matcher(lower);
    try {
      if (matcher.matches()) {
        long amount = Long.parseLong(matcher.group(1));
        return switch (matcher.group(2)) {
          case "ms" -> Duration.ofMillis(amount);
          case "s" -> Duration.ofSeconds(amount);
          case "m" -> Duration.ofMinutes(amount);
          default -> Duration.ofHours(amount);
        };
      }
      if (lower.startsWith("p")) {
        return Duration.parse(value);
      }
    } catch (DateTimeParseException | ArithmeticException e) {
      return null;
    }
    return null;
  }
}
