package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RespConnectionTest {

  @Test
  void encodesCommandAsArrayOfBulkStringsCountingUtf8Bytes() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    RespConnection.writeCommand(out, "SET", "k", "é", "");

    assertThat(out.toString(StandardCharsets.UTF_8))
        .isEqualTo("*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n$0\r\n\r\n");
  }

  @Test
  void refusesEmptyCommand() {
    assertThatThrownBy(() -> RespConnection.writeCommand(new ByteArrayOutputStream()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void decodesEachReplyType() throws IOException {
    assertThat(read("+OK\r\n")).isEqualTo("OK");
    assertThat(read(":-42\r\n")).isEqualTo(-42L);
    assertThat(read("$5\r\nhe\r\nl\r\n")).isEqualTo("he\r\nl");
    assertThat(read("$0\r\n\r\n")).isEqualTo("");
    assertThat(read("$-1\r\n")).isNull();
    assertThat(read("*-1\r\n")).isNull();
    assertThat(read("*0\r\n")).isEqualTo(List.of());
    assertThat(read("$2\r\n\u00e9\r\n".replace("\u00e9", "é"))).isEqualTo("é");
  }

  @Test
  void decodesNestedArraysWithNil() throws IOException {
    Object reply = read("*3\r\n:1\r\n*2\r\n+a\r\n$-1\r\n$1\r\nb\r\n");

    assertThat(reply).isEqualTo(List.of(1L, Arrays.asList("a", null), "b"));
  }

  @Test
  void throwsErrorReplyWithTextAndCode() {
    assertThatThrownBy(() -> read("-NOAUTH Authentication required.\r\n"))
        .isInstanceOfSatisfying(
            RedisErrorReplyException.class,
            e -> {
              assertThat(e.errorText()).isEqualTo("NOAUTH Authentication required.");
              assertThat(e.errorCode()).isEqualTo("NOAUTH");
            });
  }

  @Test
  void nestedErrorIsThrownOnlyAfterTheWholeArraySoTheStreamStaysInStep() throws IOException {
    InputStream in = stream("*2\r\n*2\r\n-WRONGTYPE bad\r\n:1\r\n+OK\r\n" + "+NEXT\r\n");

    assertThatThrownBy(() -> RespConnection.readReply(in))
        .isInstanceOfSatisfying(
            RedisErrorReplyException.class, e -> assertThat(e.errorCode()).isEqualTo("WRONGTYPE"));
    assertThat(RespConnection.readReply(in)).isEqualTo("NEXT");
  }

  @Test
  void truncatedReplyIsAnEofNotAHang() {
    assertThatThrownBy(() -> read("")).isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> read("$10\r\nabc")).isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> read("+OK")).isInstanceOf(EOFException.class);
  }

  @Test
  void unknownTypeByteIsAProtocolError() {
    assertThatThrownBy(() -> read("?what\r\n"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("'?'");
  }

  @Test
  void callWritesCommandAndReadsReplyOverASocket() throws Exception {
    try (ServerSocket server = loopbackServer()) {
      CompletableFuture<String> received =
          CompletableFuture.supplyAsync(
              () -> {
                try (Socket peer = server.accept()) {
                  InputStream in = peer.getInputStream();
                  byte[] expected = "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);
                  byte[] request = in.readNBytes(expected.length);
                  OutputStream out = peer.getOutputStream();
                  out.write("+PONG\r\n".getBytes(StandardCharsets.US_ASCII));
                  out.flush();
                  return new String(request, StandardCharsets.US_ASCII);
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              });

      try (RespConnection connection =
          RespConnection.open("127.0.0.1", server.getLocalPort(), Duration.ofSeconds(5))) {
        assertThat(connection.call("PING")).isEqualTo("PONG");
      }
      assertThat(received.get(5, TimeUnit.SECONDS)).isEqualTo("*1\r\n$4\r\nPING\r\n");
    }
  }

  @Test
  void silentServerGivesSocketTimeout() throws Exception {
    try (ServerSocket server = loopbackServer()) {
      CountDownLatch done = new CountDownLatch(1);
      CompletableFuture<Void> silentPeer =
          CompletableFuture.runAsync(
              () -> {
                try (Socket peer = server.accept()) {
                  // Holds the connection open without ever answering, like a paused server.
                  assertThat(done.await(10, TimeUnit.SECONDS))
                      .as("client gave up on %s", peer)
                      .isTrue();
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });

      try (RespConnection connection =
          RespConnection.open("127.0.0.1", server.getLocalPort(), Duration.ofMillis(200))) {
        assertThatThrownBy(() -> connection.call("PING"))
            .isInstanceOf(SocketTimeoutException.class);
      } finally {
        done.countDown();
      }
      silentPeer.get(5, TimeUnit.SECONDS);
    }
  }

  private static ServerSocket loopbackServer() throws IOException {
    ServerSocket server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
    return server;
  }

  private static Object read(String wire) throws IOException {
    return RespConnection.readReply(stream(wire));
  }

  private static InputStream stream(String wire) {
    return new ByteArrayInputStream(wire.getBytes(StandardCharsets.UTF_8));
  }
}
