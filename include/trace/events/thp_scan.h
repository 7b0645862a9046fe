/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM thp_scan

#if !defined(_TRACE_THP_SCAN_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_THP_SCAN_H

#include <linux/thp_scan.h>
#include <linux/tracepoint.h>

#define THP_SCAN_DECISIONS						\
	EM(THP_SCAN_KEEP_USED,		"keep_used")			\
	EM(THP_SCAN_SPLIT_UNDERUSED,	"split_underused")		\
	EM(THP_SCAN_SPLIT_PARTIAL,	"split_partially_mapped")	\
	EM(THP_SCAN_KEEP_UNMAPPED,	"keep_unmapped")		\
	EM(THP_SCAN_KEEP_SKIPPED,	"keep_not_judged")		\
	EM(THP_SCAN_KEEP_LOCKED,	"keep_locked")			\
	EM(THP_SCAN_KEEP_NOT_PARTIAL,	"keep_not_partial")		\
	EM(THP_SCAN_KEEP_BUSY,		"keep_rmap_busy")		\
	EM(THP_SCAN_KEEP_MLOCKED,	"keep_mlocked")			\
	EM(THP_SCAN_KEEP_PINNED,	"keep_pinned")			\
	EMe(THP_SCAN_SPLIT_ZERO_RUNS,	"split_zero_runs")

#define THP_FAULT_REASONS						\
	EM(THP_FAULT_UNDERUSED,		"underused")			\
	EM(THP_FAULT_DENSE,		"dense")			\
	EMe(THP_FAULT_EXPIRED,		"expired")

#undef EM
#undef EMe
#define EM(a, b)	TRACE_DEFINE_ENUM(a);
#define EMe(a, b)	TRACE_DEFINE_ENUM(a);

THP_SCAN_DECISIONS
THP_FAULT_REASONS

#undef EM
#undef EMe
#define EM(a, b)	{a, b},
#define EMe(a, b)	{a, b}

/*
 * What thp_scan decided for a large folio, and what it looked at: how
 * many subpages it scanned (the zero scan stops early), how many of them
 * were zero-filled, and how many subpages are mapped.
 */
TRACE_EVENT(thp_scan_decision,
	    TP_PROTO(unsigned long pfn, unsigned int order, unsigned int zero,
		     unsigned int scanned, unsigned int mapped, int decision),
	    TP_ARGS(pfn, order, zero, scanned, mapped, decision),
	    TP_STRUCT__entry(__field(unsigned long, pfn)
			     __field(unsigned int, order)
			     __field(unsigned int, zero)
			     __field(unsigned int, scanned)
			     __field(unsigned int, mapped)
			     __field(int, decision)),
	    TP_fast_assign(__entry->pfn = pfn;
			   __entry->order = order;
			   __entry->zero = zero;
			   __entry->scanned = scanned;
			   __entry->mapped = mapped;
			   __entry->decision = decision;),
	    TP_printk("pfn=0x%lx order=%u zero=%u scanned=%u mapped=%u decision=%s",
		      __entry->pfn, __entry->order, __entry->zero,
		      __entry->scanned, __entry->mapped,
		      __print_symbolic(__entry->decision, THP_SCAN_DECISIONS))
);

/*
 * The result of a split that thp_scan decided on, to folios of new_order
 * (0: base pages): 0, or a negative errno.
 */
TRACE_EVENT(thp_scan_split,
	    TP_PROTO(unsigned long pfn, unsigned int order, unsigned int new_order,
		     int decision, int ret),
	    TP_ARGS(pfn, order, new_order, decision, ret),
	    TP_STRUCT__entry(__field(unsigned long, pfn)
			     __field(unsigned int, order)
			     __field(unsigned int, new_order)
			     __field(int, decision)
			     __field(int, ret)),
	    TP_fast_assign(__entry->pfn = pfn;
			   __entry->order = order;
			   __entry->new_order = new_order;
			   __entry->decision = decision;
			   __entry->ret = ret;),
	    TP_printk("pfn=0x%lx order=%u new_order=%u decision=%s ret=%d",
		      __entry->pfn, __entry->order, __entry->new_order,
		      __print_symbolic(__entry->decision, THP_SCAN_DECISIONS),
		      __entry->ret)
);

/*
 * What reclaim did with a large folio it was about to swap out, in
 * split_on_swapout mode @mode: the decision (split_underused,
 * split_partially_mapped, or keep_used, keep_not_judged, keep_rmap_busy:
 * swapped out whole), what the zero scan looked at, how many subpages the
 * split left unmapped (freed rather than swapped), and the split's result.
 */
TRACE_EVENT(thp_scan_swapout,
	    TP_PROTO(unsigned long pfn, unsigned int order, unsigned int zero,
		     unsigned int scanned, unsigned int unmapped, const char *mode,
		     int decision, int ret),
	    TP_ARGS(pfn, order, zero, scanned, unmapped, mode, decision, ret),
	    TP_STRUCT__entry(__field(unsigned long, pfn)
			     __field(unsigned int, order)
			     __field(unsigned int, zero)
			     __field(unsigned int, scanned)
			     __field(unsigned int, unmapped)
			     __string(mode, mode)
			     __field(int, decision)
			     __field(int, ret)),
	    TP_fast_assign(__entry->pfn = pfn;
			   __entry->order = order;
			   __entry->zero = zero;
			   __entry->scanned = scanned;
			   __entry->unmapped = unmapped;
			   __assign_str(mode);
			   __entry->decision = decision;
			   __entry->ret = ret;),
	    TP_printk("pfn=0x%lx order=%u zero=%u scanned=%u unmapped=%u mode=%s decision=%s ret=%d",
		      __entry->pfn, __entry->order, __entry->zero,
		      __entry->scanned, __entry->unmapped, __get_str(mode),
		      __print_symbolic(__entry->decision, THP_SCAN_DECISIONS),
		      __entry->ret)
);

/*
 * The fault limit of the VMA of @mm at @start changed (fault_limit_secs):
 * its faults now stay below order @limit (0: no limit), after an
 * underused folio found there, dense faults, or no underused folio
 * found for fault_limit_secs; @score is the underused verdicts not yet
 * outweighed.
 */
TRACE_EVENT(thp_scan_fault_limit,
	    TP_PROTO(struct mm_struct *mm, unsigned long start,
		     unsigned int old_limit, unsigned int limit,
		     unsigned int score, int reason),
	    TP_ARGS(mm, start, old_limit, limit, score, reason),
	    TP_STRUCT__entry(__field(struct mm_struct *, mm)
			     __field(unsigned long, start)
			     __field(unsigned int, old_limit)
			     __field(unsigned int, limit)
			     __field(unsigned int, score)
			     __field(int, reason)),
	    TP_fast_assign(__entry->mm = mm;
			   __entry->start = start;
			   __entry->old_limit = old_limit;
			   __entry->limit = limit;
			   __entry->score = score;
			   __entry->reason = reason;),
	    TP_printk("mm=%p start=0x%lx old_limit=%u limit=%u score=%u reason=%s",
		      __entry->mm, __entry->start, __entry->old_limit,
		      __entry->limit, __entry->score,
		      __print_symbolic(__entry->reason, THP_FAULT_REASONS))
);

/*
 * A page fault at @address could have used a folio of @order, which
 * its VMA's limit refused: it stays below order @limit.
 */
TRACE_EVENT(thp_scan_fault_smaller,
	    TP_PROTO(unsigned long address, unsigned int order,
		     unsigned int limit),
	    TP_ARGS(address, order, limit),
	    TP_STRUCT__entry(__field(unsigned long, address)
			     __field(unsigned int, order)
			     __field(unsigned int, limit)),
	    TP_fast_assign(__entry->address = address;
			   __entry->order = order;
			   __entry->limit = limit;),
	    TP_printk("address=0x%lx order=%u limit=%u",
		      __entry->address, __entry->order, __entry->limit)
);

#endif /* _TRACE_THP_SCAN_H */

#include <trace/define_trace.h>
