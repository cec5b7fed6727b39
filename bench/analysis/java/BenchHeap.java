// SPDX-License-Identifier: Apache-2.0
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Random;

// Builds a heap of about N million objects shaped like an application's: a registry map of
// customers, each with strings, an address, a list of orders (each with a small long[] and links
// to a shared product and to another customer), plus linked chains. Prints "ready <objects>" and
// waits for end of input, so a driver can dump it with jcmd.
// Usage: BenchHeap MILLIONS
public class BenchHeap {
  static final class Product {
    final String name;
    final double price;
    Product(String name, double price) { this.name = name; this.price = price; }
  }

  static final class Address {
    String street, city;
    int zip;
  }

  static final class Order {
    long[] amounts = new long[4];
    Product product;
    Customer referrer;
  }

  static final class Customer {
    String name;
    Address address;
    List<Order> orders = new ArrayList<>(4);
    Customer nextInChain;
  }

  static HashMap<String, Customer> REGISTRY;
  static Product[] PRODUCTS;

  public static void main(String[] args) throws Exception {
    if (args.length != 1 || !args[0].matches("[1-9][0-9]*")) {
      System.err.println("usage: BenchHeap MILLIONS");
      System.exit(2);
    }
    final long target = Long.parseLong(args[0]) * 1_000_000L;
    final int perCustomer = 17;  // objects per customer, see below
    final int customers = (int) (target / perCustomer);
    Random random = new Random(42);
    PRODUCTS = new Product[1000];
    for (int i = 0; i < PRODUCTS.length; i++) PRODUCTS[i] = new Product("product-" + i, i * 1.5);
    REGISTRY = new HashMap<>(customers * 2);
    Customer[] all = new Customer[customers];
    Customer previous = null;
    for (int i = 0; i < customers; i++) {
      // 1 Customer + name (String, byte[]) + HashMap$Node + Address + 2 Strings (4 objects)
      // + ArrayList + Object[] + 3 x (Order + long[]) = 1+2+1+1+4+2+6 = 17.
      Customer c = new Customer();
      c.name = "customer-" + i;
      c.address = new Address();
      c.address.street = "street " + (i % 5000);
      c.address.city = "city-" + (i % 300);
      c.address.zip = i % 100000;
      for (int k = 0; k < 3; k++) {
        Order o = new Order();
        o.amounts[0] = i;
        o.product = PRODUCTS[random.nextInt(PRODUCTS.length)];
        if (i > 0 && random.nextInt(4) == 0) o.referrer = all[random.nextInt(i)];
        c.orders.add(o);
      }
      if (previous != null && i % 50 != 0) previous.nextInChain = c;
      previous = c;
      all[i] = c;
      REGISTRY.put(c.name, c);
    }
    all = null;
    System.gc();
    System.out.println("ready " + customers * perCustomer);
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    while (in.readLine() != null) {
    }
  }
}
