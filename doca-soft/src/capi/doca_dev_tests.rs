//! Tests of the device list and the device C API.

use crate::capi::doca_dev::*;
use crate::dev::config::{parse_pci_map, parse_ports};
use crate::dev::pci::PciAddr;
use crate::dev::sys::LinuxIface;
use crate::dev::*;
use std::ffi::{c_char, CStr};

fn iface(name: &str, ifindex: u32) -> LinuxIface {
    LinuxIface {
        name: name.into(),
        ifindex,
        mac: [0, 1, 2, 3, 4, ifindex as u8],
        ipv4: None,
    }
}

/// Calls `doca_devinfo_create_list` and returns (list, infos as Rust values).
fn c_list() -> (*mut *mut DevInfo, Vec<DevInfo>) {
    let mut list: *mut *mut DevInfo = std::ptr::null_mut();
    let mut n = 0u32;
    // SAFETY: writable out-pointers.
    assert_eq!(unsafe { doca_devinfo_create_list(&mut list, &mut n) }, 0);
    // SAFETY: the list holds n valid pointers.
    let v = (0..n as usize)
        .map(|i| unsafe { (**list.add(i)).clone() })
        .collect();
    (list, v)
}

fn c_info_named(list: *mut *mut DevInfo, name: &str) -> *mut DevInfo {
    let mut i = 0;
    loop {
        // SAFETY: the list is NULL-terminated.
        let p = unsafe { *list.add(i) };
        assert!(!p.is_null(), "{name} not listed");
        // SAFETY: non-null list element.
        if unsafe { &*p }.iface == name {
            return p;
        }
        i += 1;
    }
}

#[test]
fn c_list_contains_lo_with_the_same_address_twice() {
    let (l1, v1) = c_list();
    let (l2, v2) = c_list();
    let lo1 = v1.iter().find(|d| d.iface == "lo").expect("lo listed");
    let lo2 = v2.iter().find(|d| d.iface == "lo").expect("lo listed");
    assert_eq!(lo1.pci, lo2.pci);
    assert_eq!(lo1.ibdev, "soft_lo");
    assert!(matches!(lo1.spec, PortSpec::Linux { ref ifname, .. } if ifname == "lo"));
    // SAFETY: lists from doca_devinfo_create_list, destroyed once.
    unsafe {
        assert_eq!(doca_devinfo_destroy_list(l1), 0);
        assert_eq!(doca_devinfo_destroy_list(l2), 0);
    }
}

#[test]
fn lo_gets_its_synthetic_address_even_when_others_collide() {
    let lo_addr = PciAddr::synthetic("lo");
    // A name that sorts before `lo` and hashes to lo's address (4064 slots: found quickly).
    let rival = (0..1_000_000)
        .map(|i| format!("a{i}"))
        .find(|n| PciAddr::synthetic(n) == lo_addr)
        .expect("a colliding name exists");
    let list = build_list(&[iface(&rival, 2), iface("lo", 1)], &[], &[]);
    let by = |n: &str| list.iter().find(|d| d.iface == n).unwrap();
    assert_eq!(by("lo").pci, lo_addr.short());
    assert_eq!(by(&rival).pci, lo_addr.next_synthetic().short());
}

#[test]
fn pci_map_gives_a_port_its_address() {
    let map = parse_pci_map("17:00.0=lo;18:00.0=w1;19:00.0=missing").unwrap();
    let extra = parse_ports("wire:w").unwrap();
    let list = build_list(&[iface("lo", 1), iface("eth0", 2)], &extra, &map);
    let by = |n: &str| list.iter().find(|d| d.iface == n).unwrap();
    assert_eq!(by("lo").pci, "17:00.0");
    assert_eq!(by("w1").pci, "18:00.0");
    assert_eq!(by("w0").pci, PciAddr::synthetic("w0").short());
    assert_eq!(by("eth0").pci, PciAddr::synthetic("eth0").short());
    assert!(by("lo").matches("0000:17:00.0"));
    assert!(by("lo").matches("17:00.0"));
    assert!(!by("lo").matches("18:00.0"));
    assert_eq!(
        by("w1").spec,
        PortSpec::Wire {
            name: "w".into(),
            side: 1
        }
    );
    assert_eq!(list.len(), 4);
}

#[test]
fn synthetic_addresses_skip_mapped_ones() {
    let eth0 = PciAddr::synthetic("eth0");
    let map = vec![(eth0, "lo".to_string())];
    let list = build_list(&[iface("lo", 1), iface("eth0", 2)], &[], &map);
    let by = |n: &str| list.iter().find(|d| d.iface == n).unwrap();
    assert_eq!(by("lo").pci, eth0.short());
    assert_eq!(by("eth0").pci, eth0.next_synthetic().short());
}

#[test]
fn getters_check_buffers_and_nulls() {
    let (list, _) = c_list();
    let lo = c_info_named(list, "lo");
    let mut pci = [0 as c_char; PCI_ADDR_SIZE];
    let mut small = [0 as c_char; 4];
    let mut name = [0 as c_char; IBDEV_NAME_SIZE];
    let mut mac = [0u8; 6];
    let mut ip = [0u8; 4];
    let mut eq = 9u8;
    // SAFETY: every buffer is as large as the size passed; lo is a live list element.
    unsafe {
        assert_eq!(doca_devinfo_get_pci_addr_str(lo, pci.as_mut_ptr()), 0);
        let s = CStr::from_ptr(pci.as_ptr()).to_str().unwrap().to_owned();
        assert_eq!(s.len(), 12);
        assert!(s.starts_with("0000:"));
        assert_eq!(doca_devinfo_is_equal_pci_addr(lo, pci.as_ptr(), &mut eq), 0);
        assert_eq!(eq, 1);
        assert_eq!(
            doca_devinfo_is_equal_pci_addr(lo, c"soft_lo".as_ptr(), &mut eq),
            0
        );
        assert_eq!(eq, 1);
        assert_eq!(
            doca_devinfo_is_equal_pci_addr(lo, c"7f:1f.7".as_ptr(), &mut eq),
            0
        );
        assert_eq!(eq, u8::from(s == "0000:7f:1f.7"));
        assert_eq!(
            doca_devinfo_is_equal_pci_addr(lo, c"".as_ptr(), &mut eq),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_devinfo_is_equal_pci_addr(lo, std::ptr::null(), &mut eq),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_devinfo_get_ibdev_name(lo, name.as_mut_ptr(), name.len() as u32),
            0
        );
        assert_eq!(CStr::from_ptr(name.as_ptr()).to_str().unwrap(), "soft_lo");
        assert_eq!(
            doca_devinfo_get_ibdev_name(lo, small.as_mut_ptr(), small.len() as u32),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_devinfo_get_iface_name(lo, name.as_mut_ptr(), name.len() as u32),
            0
        );
        assert_eq!(CStr::from_ptr(name.as_ptr()).to_str().unwrap(), "lo");
        assert_eq!(
            doca_devinfo_get_iface_name(lo, small.as_mut_ptr(), 2),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_devinfo_get_mac_addr(lo, mac.as_mut_ptr(), 6), 0);
        assert_eq!(
            doca_devinfo_get_mac_addr(lo, mac.as_mut_ptr(), 5),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_devinfo_get_ipv4_addr(lo, ip.as_mut_ptr(), 4), 0);
        assert_eq!(ip, [127, 0, 0, 1]);
        assert_eq!(
            doca_devinfo_get_ipv4_addr(lo, ip.as_mut_ptr(), 3),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(
            doca_devinfo_get_mac_addr(std::ptr::null(), mac.as_mut_ptr(), 6),
            DocaError::INVALID_VALUE.0
        );
        let mut ft = 7u32;
        assert_eq!(doca_devinfo_get_pci_func_type(lo, &mut ft), 0);
        assert_eq!(ft, PCI_FUNC_TYPE_PF);
        let mut sf = 0u32;
        assert_eq!(
            doca_devinfo_get_sf_index(lo, &mut sf),
            DocaError::NOT_SUPPORTED.0
        );
        assert_eq!(
            doca_devinfo_create_list(std::ptr::null_mut(), std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert_eq!(doca_devinfo_destroy_list(list), 0);
    }
}

#[test]
fn open_outlives_the_list_and_close_respects_users() {
    let (list, _) = c_list();
    let lo = c_info_named(list, "lo");
    let mut dev: *mut Dev = std::ptr::null_mut();
    // SAFETY: live list element and writable out-pointer; the device is closed once.
    unsafe {
        assert_eq!(doca_dev_open(lo, &mut dev), 0);
        assert_eq!(doca_devinfo_destroy_list(list), 0);
        let info = doca_dev_as_devinfo(dev);
        assert!(!info.is_null());
        assert_eq!((*info).iface, "lo");
        let mut name = [0 as c_char; IFACE_NAME_SIZE];
        assert_eq!(doca_devinfo_get_iface_name(info, name.as_mut_ptr(), 256), 0);
        (*dev).add_user();
        assert_eq!(doca_dev_close(dev), DocaError::IN_USE.0);
        (*dev).remove_user();
        assert_eq!(doca_dev_close(dev), 0);
        assert_eq!(
            doca_dev_close(std::ptr::null_mut()),
            DocaError::INVALID_VALUE.0
        );
        assert!(doca_dev_as_devinfo(std::ptr::null()).is_null());
        assert_eq!(
            doca_dev_open(std::ptr::null_mut(), &mut dev),
            DocaError::INVALID_VALUE.0
        );
    }
}

#[test]
fn find_device_by_name_and_unknown_address() {
    let lo = find_device("lo").unwrap();
    assert_eq!(find_device(&lo.pci).unwrap().iface, "lo");
    assert_eq!(find_device("soft_lo").unwrap().iface, "lo");
    // Bus 0x00 is never synthetic and the test does not map it.
    assert_eq!(find_device("00:1f.7").unwrap_err(), DocaError::NOT_FOUND);
}

#[test]
fn xdp_entry_carries_the_interface_of_its_name() {
    let linux = [iface("lo", 1), iface("veth0", 7)];
    let extra = parse_ports("xdp:veth0,native; xdp:gone0").unwrap();
    let list = build_list(&linux, &extra, &[]);
    // veth0 is listed once, with its own MAC, now carried by AF_XDP.
    let v: Vec<&DevInfo> = list.iter().filter(|d| d.iface == "veth0").collect();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].mac, [0, 1, 2, 3, 4, 7]);
    assert_eq!(
        v[0].spec,
        PortSpec::Xdp {
            ifname: "veth0".into(),
            native: true,
            zerocopy: false
        }
    );
    // An xdp entry for an interface that does not exist is still listed (opening its
    // port is NOT_FOUND).
    assert!(list
        .iter()
        .any(|d| d.iface == "gone0" && matches!(d.spec, PortSpec::Xdp { .. })));
    assert_eq!(list.len(), 3);
}
