package io.redlock.spring.boot;

/** An order, as the docs' locked-method example takes one. */
public class Order {
  private final String id;

  public Order(String id) {
    this.id = id;
  }

  public String getId() {
    return id;
  }
}
