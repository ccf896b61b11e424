package io.redlock.lettuce;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A TCP server on a free loopback port that is not Redis, for hostile-node tests: it answers
 * garbage, answers nothing, or answers each RESP command as a script says.
 *
 * <p>Thread-safe; one thread per connection, all stopped by {@link #close()}.
 */
final class ScriptedServer implements AutoCloseable {
  private final ServerSocket socket;
  private final List<Socket> clients = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  private ScriptedServer(Handler handler) throws IOException {
    socket = new ServerSocket();
    socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    acceptor =
        new Thread(
            () -> {
              while (!socket.isClosed()) {
                try {
                  Socket client = socket.accept();
                  clients.add(client);
                  Thread serving =
                      new Thread(() -> serve(handler, client), "scripted-server-client");
                  serving.setDaemon(true);
                  serving.start();
                } catch (IOException e) {
                  return; // closed
                }
              }
            },
            "scripted-server");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Writes {@code text} to every connection as soon as it opens, then reads and ignores. */
  static ScriptedServer garbage(String text) throws IOException {
    return new ScriptedServer(
        (in, out) -> {
          out.write(text.getBytes(StandardCharsets.UTF_8));
          out.flush();
          while (in.read() >= 0) {
            // keep the connection open, say nothing sensible
          }
        });
  }

  /** Accepts connections and reads from them, never writing a byte. */
  static ScriptedServer silent() throws IOException {
    return new ScriptedServer(
        (in, out) -> {
          while (in.read() >= 0) {
            // swallow
          }
        });
  }

  /**
   * Answers each RESP command with the raw RESP text {@code script} returns for its words
   * (upper-cased command name first).
   */
  static ScriptedServer scripted(Function<List<String>, String> script) throws IOException {
    return new ScriptedServer(
        (in, out) -> {
          while (true) {
            List<String> command = readCommand(in);
            if (command == null) {
              return;
            }
            out.write(script.apply(command).getBytes(StandardCharsets.UTF_8));
            out.flush();
          }
        });
  }

  String uri() {
    return "redis://127.0.0.1:" + socket.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    socket.close();
    for (Socket client : clients) {
      client.close();
    }
  }

  private interface Handler {
    void handle(InputStream in, OutputStream out) throws IOException;
  }

  private static void serve(Handler handler, Socket client) {
    try (client) {
      handler.handle(new BufferedInputStream(client.getInputStream()), client.getOutputStream());
    } catch (IOException e) {
      // the client went away, or close() closed the socket
    }
  }

  /** One RESP array of bulk strings, or null at the end of the stream. */
  private static List<String> readCommand(InputStream in) throws IOException {
    String header = readLine(in);
    if (header == null) {
      return null;
    }
    if (!header.startsWith("*")) {
      throw new IOException("not a RESP array: " + header);
    }
    int count = Integer.parseInt(header.substring(1));
    List<String> words = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int length = Integer.parseInt(readLine(in).substring(1));
      byte[] bytes = in.readNBytes(length + 2);
      words.add(new String(bytes, 0, length, StandardCharsets.UTF_8));
    }
    words.set(0, words.get(0).toUpperCase(Locale.ROOT));
    return words;
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      if (c == '\r') {
        in.read(); // '\n'
        return line.toString();
      }
      line.append((char) c);
    }
    return line.length() == 0 ? null : line.toString();
  }
}
