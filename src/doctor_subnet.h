/* SPDX-License-Identifier: MIT */
/*
 * The doctor's subnet-overlap check, in a file of its own: an address or
 * route of a host (a VPN tunnel's, a LAN's) that overlaps the subnet of a
 * cable captures or shadows the cluster's traffic. See doctor.h.
 */
#ifndef JC_DOCTOR_SUBNET_H
#define JC_DOCTOR_SUBNET_H

#include "doctor.h"

/*
 * subnet-overlap: the cables' subnets are the networks of the addresses on
 * the cables' interfaces (as set up), and the hostfile's addresses on a
 * /30 that no host uses for management (a ring hostfile's); with none
 * set up yet, the plan's numbering (subnet_choose() of the cables). Every
 * address or route of a host (subnet_taken(): not on the interfaces a
 * setup owns) that overlaps one is an error whose remedy names the first
 * free range for --subnet. A host whose routes were not captured (a
 * bundle of an older probe) has its addresses checked, and an ok finding
 * says so.
 */
void doctor_chk_subnet(const struct doctor_input *in, struct doctor_report *r);

#endif
