package io.redlock.testkit;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One plain-socket connection speaking RESP2, just enough to send a command and read its reply.
 *
 * <p>Replies map to Java as: simple and bulk strings to {@link String} (UTF-8), integers to
 * {@link Long}, arrays to an unmodifiable {@code List<Object>} and nil to {@code null}. An
 * error reply throws {@link RedisErrorReplyException}; an error nested in an array (as in an
 * {@code EXEC} result) throws too, but only after the whole array has been read, so the
 * connection stays in step with the server.
 *
 * <p>Both the connect and every read are bounded by the timeout given to {@link #open}, so a
 * paused server fails a call with a {@link java.net.SocketTimeoutException} instead of hanging.
 *
 * <p>Not thread-safe: one connection serves one thread, which is how {@link RedisServers} uses
 * it (a short-lived connection per command).
 */
final class RespConnection implements Closeable {

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;
  private String[] pendingAuth;

  private RespConnection(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream());
    this.out = new BufferedOutputStream(socket.getOutputStream());
  }

  /**
   * Connects to a server; the timeout bounds the connect and each later read.
   */
  static RespConnection open(String host, int port, Duration timeout) throws IOException {
    int millis = Math.toIntExact(Math.max(1, timeout.toMillis()));
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.setSoTimeout(millis);
      socket.connect(new InetSocketAddress(host, port), millis);
      return new RespConnection(socket);
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }

  /**
   * Sends one command and returns its decoded reply.
   *
   * @throws RedisErrorReplyException if the server answered with an error reply
   */
  Object call(String... args) throws IOException {
    String[] auth = pendingAuth;
    if (auth != null) {
      // Sent with the first command, in one write: a fault that keeps the command from its
      // server hits both alike, so the first call fails as it would without AUTH.
      writeCommand(out, auth);
    }
    writeCommand(out, args);
    out.flush();
    if (auth != null) {
      pendingAuth = null;
      readReply(in);
    }
    return readReply(in);
  }

  /**
   * Authenticates with {@code AUTH args...} in front of the next command.
   *
   * @return this connection
   */
  RespConnection authenticateFirst(String... args) {
    String[] auth = new String[args.length + 1];
    auth[0] = "AUTH";
    System.arraycopy(args, 0, auth, 1, args.length);
    pendingAuth = auth;
    return this;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  /** Encodes a command the way every client does: an array of bulk strings. */
  static void writeCommand(OutputStream out, String... args) throws IOException {
    if (args.length == 0) {
      throw new IllegalArgumentException("A Redis command needs at least its name");
    }
    writeLine(out, "*" + args.length);
    for (String arg : args) {
      byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
      writeLine(out, "$" + bytes.length);
      out.write(bytes);
      out.write('\r');
      out.write('\n');
    }
  }

  /**
   * Reads one complete reply.
   *
   * @throws RedisErrorReplyException if the reply is, or contains, an error reply
   * @throws EOFException if the stream ends before the reply does
   */
  static Object readReply(InputStream in) throws IOException {
    Object reply = readValue(in);
    if (reply instanceof ErrorReply) {
      throw new RedisErrorReplyException(((ErrorReply) reply).text);
    }
    return reply;
  }

  /** Errors are returned rather than thrown here so that nested ones do not desync the stream. */
  private static Object readValue(InputStream in) throws IOException {
    int type = in.read();
    if (type < 0) {
      throw new EOFException("Connection closed by the server before a reply was read");
    }
    String line = readLine(in);
    switch (type) {
      case '+':
        return line;
      case '-':
        return new ErrorReply(line);
      case ':':
        return Long.parseLong(line);
      case '$':
        return readBulk(in, Integer.parseInt(line));
      case '*':
        return readArray(in, Integer.parseInt(line));
      default:
        throw new IOException("Unexpected RESP type byte '" + (char) type + "' before: " + line);
    }
  }

  private static String readBulk(InputStream in, int length) throws IOException {
    if (length < 0) {
      return null;
    }
    byte[] bytes = in.readNBytes(length);
    if (bytes.length < length) {
      throw new EOFException("Connection closed in the middle of a bulk string");
    }
    if (in.read() != '\r' || in.read() != '\n') {
      throw new IOException("Bulk string of " + length + " bytes not followed by CRLF");
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** Returns the list, or the first error found anywhere inside it once it is fully read. */
  private static Object readArray(InputStream in, int count) throws IOException {
    if (count < 0) {
      return null;
    }
    List<Object> items = new ArrayList<>(count);
    ErrorReply firstError = null;
    for (int i = 0; i < count; i++) {
      Object item = readValue(in);
      if (item instanceof ErrorReply && firstError == null) {
        firstError = (ErrorReply) item;
      }
      items.add(item);
    }
    return firstError != null ? firstError : Collections.unmodifiableList(items);
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(32);
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("Connection closed in the middle of a reply line");
      }
      if (b == '\r') {
        if (in.read() != '\n') {
          throw new IOException("CR not followed by LF in a reply line");
        }
        return line.toString(StandardCharsets.UTF_8);
      }
      line.write(b);
    }
  }

  private static void writeLine(OutputStream out, String line) throws IOException {
    out.write(line.getBytes(StandardCharsets.US_ASCII));
    out.write('\r');
    out.write('\n');
  }

  /** An error reply read but not yet thrown. */
  private static final class ErrorReply {
    final String text;

    ErrorReply(String text) {
      this.text = text;
    }
  }
}
