# A service job in the scheduling subset the importer reads.
job "web" {
  datacenters = ["dc1"]
  type        = "service"
  priority    = 60

  update {
    max_parallel     = 2
    min_healthy_time = "10s"
    healthy_deadline = "5m"
    auto_revert      = true
  }

  group "web" {
    count = 3

    constraint {
      attribute = "${node.unique.id}"
      operator  = "set_contains_any"
      value     = "node-a,node-b"
    }

    disconnect {
      lost_after = "10m"
      replace    = false
      reconcile  = "keep_original"
    }

    reschedule {
      delay          = "30s"
      delay_function = "exponential"
      max_delay      = "1h"
      unlimited      = true
    }

    network {
      port "http" {
        to = 8080
      }
    }

    task "server" {
      driver = "docker"

      config {
        image = "nginx:1.25"
        ports = ["http"]
        args  = ["-g", "daemon off;"]
      }

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }

  group "cache" {
    count                 = 1
    max_client_disconnect = "1h"

    task "redis" {
      driver       = "docker"
      kill_timeout = "20s"
      config {
        image = "redis:7"
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
