package io.redlock.internal;

/**
 * Text from outside (resource names, node strings, a command's name, server replies) made
 * safe for a terminal: control characters cannot end a line early, forge a line of output or
 * send escape sequences to the terminal.
 *
 * <p>Each control character (C0, DEL, C1) and each Unicode line or paragraph separator is
 * written as a Java-style escape ({@code \n}, {@code \r}, {@code \t}, {@code \e}, else
 * {@code \}{@code uXXXX}); a backslash is doubled, so the escaped text reads back unambiguously.
 * Other text is unchanged. Thread-safe: a pure function.
 */
public final class Printable {

  private Printable() {}

  /** {@code text} with its control characters escaped; {@code "null"} for null. */
  public static String of(String text) {
    if (text == null) {
      return "null";
    }
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      String escape = escape(c);
      if (escape != null && out == null) {
        out = new StringBuilder(text.length() + 8).append(text, 0, i);
      }
      if (out != null) {
        if (escape != null) {
          out.append(escape);
        } else {
          out.append(c);
        }
      }
    }
    return out == null ? text : out.toString();
  }

  private static String escape(char c) {
    switch (c) {
      case '\\':
        return "\\\\";
      case '\n':
        return "\\n";
      case '\r':
        return "\\r";
      case '\t':
        return "\\t";
      case 0x1b:
        return "\\e";
      default:
        break;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029') {
      return String.format("\\u%04x", (int) c);
    }
    return null;
  }
}
