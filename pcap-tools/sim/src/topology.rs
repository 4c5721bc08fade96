//! The fabric's shape as plain data: nodes (hosts and switches), duplex links and, per switch,
//! the candidate next hops towards every host. [`crate::sim::Fabric`] instantiates ports, queues
//! and taps from it; routing among equal-cost candidates (ECMP hash, spraying, adaptive) is the
//! fabric's.
//!
//! Two shapes:
//! - **Dumbbell** (the DCP testbed, seed 000 §6.1): senders `s0 … s{n-1}` on switch `sw0`, the
//!   receiver `r0` on `sw1`, and `paths` parallel links `sw0—sw1`. Addresses: sender `i` is
//!   10.0.0.(i+1), the receiver 10.0.1.1 (unchanged since the first captures, so existing
//!   fixtures keep their bytes).
//! - **Leaf-spine** (two tiers, the usual data-centre fabric): `leaves` top-of-rack switches
//!   `leaf{l}` with `hosts_per_leaf` hosts `h{l}.{j}` each, every leaf linked once to each of
//!   `spines` switches `spine{s}`. A leaf reaches a host of another leaf over any spine (as many
//!   equal-cost candidates as spines), a spine reaches it over the link to its leaf. Host `j`
//!   of leaf `l` is 10.1.l.(j+1) with MAC 02:00:01:l:00:(j+1).
//!
//! Link ids are indices into [`Topology::links`]; a link's end `a` is its first node. A route
//! candidate is a [`Hop`]: the link and the direction it is used in.

use std::collections::HashMap;
use std::net::IpAddr;

/// What a node is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host { ip: IpAddr },
    Switch,
}

/// A node of the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub name: String,
    pub mac: [u8; 6],
    pub kind: NodeKind,
}

/// What a link is for (loss placement and taps name links by role).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkRole {
    /// A host's link to its switch.
    Access,
    /// Dumbbell: parallel link `k` between the two switches.
    Path(u32),
    /// Leaf-spine: the link between leaf `leaf` and spine `spine`.
    Uplink { leaf: u32, spine: u32 },
}

/// A duplex link between nodes `a` and `b` (indices into [`Topology::nodes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub role: LinkRole,
}

/// One way over a link: from `a` to `b` when `forward`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub link: usize,
    pub forward: bool,
}

/// The shapes [`Topology`] can build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Dumbbell {
        senders: usize,
        paths: u32,
    },
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
    },
}

/// Nodes, links and routes.
#[derive(Clone, Debug)]
pub struct Topology {
    pub shape: Shape,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Hosts, in address order (node indices).
    pub hosts: Vec<usize>,
    /// Per node: per host (index into `hosts`), the equal-cost hops towards it (empty for a
    /// host node, whose only way out is its access link).
    pub routes: Vec<Vec<Vec<Hop>>>,
    by_ip: HashMap<IpAddr, usize>,
}

impl Topology {
    /// Builds `shape`. Panics when it has no host or no path between its switches.
    pub fn new(shape: Shape) -> Topology {
        let mut t = Topology {
            shape,
            nodes: Vec::new(),
            links: Vec::new(),
            hosts: Vec::new(),
            routes: Vec::new(),
            by_ip: HashMap::new(),
        };
        match shape {
            Shape::Dumbbell { senders, paths } => t.dumbbell(senders.max(1), paths.max(1)),
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => t.leaf_spine(leaves.max(1), spines.max(1), hosts_per_leaf.max(1)),
        }
        t
    }

    fn host(&mut self, name: String, ip: IpAddr, mac: [u8; 6]) -> usize {
        let n = self.nodes.len();
        self.nodes.push(NodeSpec {
            name,
            mac,
            kind: NodeKind::Host { ip },
        });
        self.hosts.push(n);
        self.by_ip.insert(ip, self.hosts.len() - 1);
        n
    }

    fn switch(&mut self, name: String, mac: [u8; 6]) -> usize {
        self.nodes.push(NodeSpec {
            name,
            mac,
            kind: NodeKind::Switch,
        });
        self.nodes.len() - 1
    }

    fn link(&mut self, a: usize, b: usize, role: LinkRole) -> usize {
        self.links.push(LinkSpec { a, b, role });
        self.links.len() - 1
    }

    fn dumbbell(&mut self, senders: usize, paths: u32) {
        let s: Vec<usize> = (0..senders)
            .map(|i| {
                self.host(
                    format!("s{i}"),
                    IpAddr::from([10, 0, 0, (i + 1) as u8]),
                    [0x02, 0, 0, 0, 0, (i + 1) as u8],
                )
            })
            .collect();
        let r = self.host(
            "r0".into(),
            IpAddr::from([10, 0, 1, 1]),
            [0x02, 0, 0, 0, 1, 1],
        );
        let sw0 = self.switch("sw0".into(), [0x02, 0, 0, 0, 0xf0, 0]);
        let sw1 = self.switch("sw1".into(), [0x02, 0, 0, 0, 0xf1, 0]);
        let access: Vec<usize> = s
            .iter()
            .map(|&h| self.link(h, sw0, LinkRole::Access))
            .collect();
        let r_access = self.link(r, sw1, LinkRole::Access);
        let path: Vec<usize> = (0..paths)
            .map(|k| self.link(sw0, sw1, LinkRole::Path(k)))
            .collect();
        self.routes = vec![Vec::new(); self.nodes.len()];
        let nh = self.hosts.len();
        let mut at0 = vec![Vec::new(); nh];
        let mut at1 = vec![Vec::new(); nh];
        for (i, &l) in access.iter().enumerate() {
            at0[i] = vec![Hop {
                link: l,
                forward: false,
            }];
            at1[i] = path
                .iter()
                .map(|&l| Hop {
                    link: l,
                    forward: false,
                })
                .collect();
        }
        at0[nh - 1] = path
            .iter()
            .map(|&l| Hop {
                link: l,
                forward: true,
            })
            .collect();
        at1[nh - 1] = vec![Hop {
            link: r_access,
            forward: false,
        }];
        self.routes[sw0] = at0;
        self.routes[sw1] = at1;
    }

    fn leaf_spine(&mut self, leaves: u32, spines: u32, per_leaf: u32) {
        let mut host_leaf = Vec::new();
        for l in 0..leaves {
            for j in 0..per_leaf {
                self.host(
                    format!("h{l}.{j}"),
                    IpAddr::from([10, 1, l as u8, (j + 1) as u8]),
                    [0x02, 0, 0x01, l as u8, 0, (j + 1) as u8],
                );
                host_leaf.push(l as usize);
            }
        }
        let leaf: Vec<usize> = (0..leaves)
            .map(|l| self.switch(format!("leaf{l}"), [0x02, 0, 0, 0x1e, l as u8, 0]))
            .collect();
        let spine: Vec<usize> = (0..spines)
            .map(|s| self.switch(format!("spine{s}"), [0x02, 0, 0, 0x5e, s as u8, 0]))
            .collect();
        let access: Vec<usize> = (0..self.hosts.len())
            .map(|h| self.link(self.hosts[h], leaf[host_leaf[h]], LinkRole::Access))
            .collect();
        // uplink[l][s]
        let uplink: Vec<Vec<usize>> = (0..leaves)
            .map(|l| {
                (0..spines)
                    .map(|s| {
                        self.link(
                            leaf[l as usize],
                            spine[s as usize],
                            LinkRole::Uplink { leaf: l, spine: s },
                        )
                    })
                    .collect()
            })
            .collect();
        self.routes = vec![Vec::new(); self.nodes.len()];
        for l in 0..leaves as usize {
            self.routes[leaf[l]] = (0..self.hosts.len())
                .map(|h| {
                    if host_leaf[h] == l {
                        vec![Hop {
                            link: access[h],
                            forward: false,
                        }]
                    } else {
                        uplink[l]
                            .iter()
                            .map(|&u| Hop {
                                link: u,
                                forward: true,
                            })
                            .collect()
                    }
                })
                .collect();
        }
        for s in 0..spines as usize {
            self.routes[spine[s]] = (0..self.hosts.len())
                .map(|h| {
                    vec![Hop {
                        link: uplink[host_leaf[h]][s],
                        forward: false,
                    }]
                })
                .collect();
        }
    }

    /// The host (index into `hosts`) that owns `ip`.
    pub fn host_of(&self, ip: IpAddr) -> Option<usize> {
        self.by_ip.get(&ip).copied()
    }

    /// A host's address.
    pub fn host_ip(&self, h: usize) -> IpAddr {
        match self.nodes[self.hosts[h]].kind {
            NodeKind::Host { ip } => ip,
            NodeKind::Switch => unreachable!("hosts hold host nodes"),
        }
    }

    /// The node a hop leads to.
    pub fn hop_to(&self, hop: Hop) -> usize {
        let l = &self.links[hop.link];
        if hop.forward {
            l.b
        } else {
            l.a
        }
    }

    /// The names of a link's two directions (`a>b`, `b>a`), as the simulator's ports and the
    /// truth's places use them; a dumbbell path is `sw0>sw1#k` / `sw1>sw0#k`.
    pub fn link_names(&self, link: usize) -> (String, String) {
        let l = &self.links[link];
        let (a, b) = (&self.nodes[l.a].name, &self.nodes[l.b].name);
        match l.role {
            LinkRole::Path(k) => (format!("{a}>{b}#{k}"), format!("{b}>{a}#{k}")),
            _ => (format!("{a}>{b}"), format!("{b}>{a}")),
        }
    }

    /// The link one of whose directions is named `name` (e.g. `leaf0>spine1`, `spine1>leaf0`,
    /// `sw0>sw1#2`, `s0>sw0`).
    pub fn link_by_name(&self, name: &str) -> Option<usize> {
        (0..self.links.len()).find(|&l| {
            let (ab, ba) = self.link_names(l);
            ab == name || ba == name
        })
    }

    /// A host's access link.
    pub fn access_link(&self, h: usize) -> usize {
        let node = self.hosts[h];
        self.links
            .iter()
            .position(|l| l.a == node && l.role == LinkRole::Access)
            .expect("every host has an access link")
    }

    /// The switch a host hangs off.
    pub fn leaf_of(&self, h: usize) -> usize {
        self.links[self.access_link(h)].b
    }

    /// Removes a failed link from every route, and then every hop into a switch left with no
    /// way to that host (routing reconverged around the failure). Returns false when some host
    /// can no longer reach some other host.
    pub fn fail_link(&mut self, link: usize) -> bool {
        for per_node in &mut self.routes {
            for hops in per_node.iter_mut() {
                hops.retain(|h| h.link != link);
            }
        }
        loop {
            let mut changed = false;
            for n in 0..self.routes.len() {
                for dst in 0..self.routes[n].len() {
                    let before = self.routes[n][dst].len();
                    let keep: Vec<Hop> = self.routes[n][dst]
                        .iter()
                        .copied()
                        .filter(|&h| {
                            let to = self.hop_to(h);
                            to == self.hosts[dst]
                                || !self.routes[to].get(dst).is_none_or(|r| r.is_empty())
                        })
                        .collect();
                    changed |= keep.len() != before;
                    self.routes[n][dst] = keep;
                }
            }
            if !changed {
                break;
            }
        }
        (0..self.hosts.len()).all(|src| {
            let first = self.leaf_of(src);
            (0..self.hosts.len()).all(|dst| dst == src || !self.routes[first][dst].is_empty())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows the first candidate at every switch from host `src` to host `dst`; the nodes
    /// visited.
    fn walk(t: &Topology, src: usize, dst: usize, pick: usize) -> Vec<String> {
        let mut at = t.leaf_of(src);
        let mut path = vec![t.nodes[t.hosts[src]].name.clone(), t.nodes[at].name.clone()];
        for _ in 0..8 {
            let hops = &t.routes[at][dst];
            let hop = hops[pick % hops.len()];
            at = t.hop_to(hop);
            path.push(t.nodes[at].name.clone());
            if at == t.hosts[dst] {
                return path;
            }
        }
        panic!("no way from {src} to {dst}: {path:?}");
    }

    #[test]
    fn the_dumbbell_keeps_its_names_addresses_and_parallel_paths() {
        let t = Topology::new(Shape::Dumbbell {
            senders: 3,
            paths: 4,
        });
        assert_eq!(t.hosts.len(), 4);
        assert_eq!(t.host_of(IpAddr::from([10, 0, 0, 2])), Some(1));
        assert_eq!(t.host_of(IpAddr::from([10, 0, 1, 1])), Some(3));
        let sw0 = t.leaf_of(0);
        assert_eq!(t.nodes[sw0].name, "sw0");
        assert_eq!(t.routes[sw0][3].len(), 4, "four paths towards the receiver");
        assert_eq!(walk(&t, 0, 3, 2), ["s0", "sw0", "sw1", "r0"]);
        assert_eq!(walk(&t, 3, 1, 0), ["r0", "sw1", "sw0", "s1"]);
    }

    #[test]
    fn every_leaf_spine_host_reaches_every_other_over_every_spine() {
        let t = Topology::new(Shape::LeafSpine {
            leaves: 3,
            spines: 4,
            hosts_per_leaf: 2,
        });
        assert_eq!(
            (t.hosts.len(), t.nodes.len(), t.links.len()),
            (6, 6 + 3 + 4, 6 + 12)
        );
        for src in 0..6 {
            for dst in (0..6).filter(|&d| d != src) {
                for pick in 0..4 {
                    let p = walk(&t, src, dst, pick);
                    let same_leaf = src / 2 == dst / 2;
                    assert_eq!(p.len(), if same_leaf { 3 } else { 5 }, "{p:?}");
                    if !same_leaf {
                        assert_eq!(p[2], format!("spine{pick}"));
                    }
                }
            }
        }
        assert_eq!(t.host_ip(5), IpAddr::from([10, 1, 2, 2]));
        assert_eq!(t.nodes[t.hosts[5]].name, "h2.1");
    }

    #[test]
    fn a_failed_uplink_leaves_the_other_spines() {
        let mut t = Topology::new(Shape::LeafSpine {
            leaves: 2,
            spines: 2,
            hosts_per_leaf: 1,
        });
        let up = t
            .links
            .iter()
            .position(|l| l.role == LinkRole::Uplink { leaf: 0, spine: 1 })
            .unwrap();
        assert!(t.fail_link(up));
        let (leaf0, leaf1) = (t.leaf_of(0), t.leaf_of(1));
        assert_eq!(t.routes[leaf0][1].len(), 1);
        assert_eq!(
            t.routes[leaf1][0].len(),
            1,
            "leaf 1 no longer sends leaf 0's traffic to spine 1"
        );
        for pick in 0..2 {
            assert_eq!(walk(&t, 0, 1, pick)[2], "spine0");
            assert_eq!(walk(&t, 1, 0, pick)[2], "spine0");
        }
        // With one spine left per leaf, failing it too cuts leaf 0 off.
        let up0 = t
            .links
            .iter()
            .position(|l| l.role == LinkRole::Uplink { leaf: 0, spine: 0 })
            .unwrap();
        assert!(!t.fail_link(up0));
    }
}
