package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// pathThreadID returns the path's thread id after the thread id rule (400).
func pathThreadID(r *http.Request) (string, error) {
	tid := r.PathValue("thread_id")
	if err := validThreadID(tid); err != nil {
		return "", err
	}
	return tid, nil
}

// validThreadID is the hosting routes' thread id rule (host.ValidateThreadID) plus one of
// the platform's own: a thread id is a path segment of every thread route, so "." and "..",
// which every URL normaliser removes from a path, are refused (400) — at create, and on
// every route, where no thread can have them.
func validThreadID(tid string) error {
	if err := host.ValidateThreadID(tid); err != nil {
		return apierror.New(apierror.ErrBadRequest, err.Error())
	}
	if tid == "." || tid == ".." {
		return apierror.New(apierror.ErrBadRequest, "Thread ID must not be '.' or '..'")
	}
	return nil
}

// storeError turns a thread store error into the platform's answer for thread tid.
func storeError(err error, tid string) error {
	if errors.Is(err, threads.ErrThreadNotFound) {
		return threadNotFound(tid)
	}
	return err
}

func threadNotFound(tid string) error {
	return apierror.Newf(apierror.ErrNotFound, "Thread %s not found", repr(tid))
}

func (s *Service) serveThreadCreate(w http.ResponseWriter, r *http.Request) {
	t, err := s.createThread(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, wireThread(t))
}

// createThread stores a new thread: with the caller's thread_id when given (if_exists
// raise: 409 when it is taken; do_nothing: the existing thread), else a fresh UUID.
func (s *Service) createThread(r *http.Request) (threads.Thread, error) {
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return threads.Thread{}, err
	}
	obj, err := parseBody(body, emptyOK)
	if err != nil {
		return threads.Thread{}, err
	}
	meta, err := obj.optObject("metadata")
	if err != nil {
		return threads.Thread{}, err
	}
	tid, given, err := obj.optString("thread_id")
	if err != nil {
		return threads.Thread{}, err
	}
	ifExists, err := optEnum(obj, "if_exists", "Input should be 'raise' or 'do_nothing'", "raise", "do_nothing")
	if err != nil {
		return threads.Thread{}, err
	}
	if !given {
		tid = uuid.NewString()
	} else if err := validThreadID(tid); err != nil {
		return threads.Thread{}, err
	} else if err := s.checkClaim(r.Context(), tid); err != nil {
		return threads.Thread{}, err
	}
	t, err := s.newThread(r.Context(), tid, s.ownedMetadata(r.Context(), decodeMap(meta)))
	if errors.Is(err, threads.ErrThreadExists) {
		exists := apierror.Newf(apierror.ErrConflict, "Thread %s already exists", repr(tid))
		if ifExists != "do_nothing" {
			return threads.Thread{}, exists
		}
		t, err = s.store.Get(r.Context(), tid)
		if err == nil && !s.owns(r.Context(), t) {
			return threads.Thread{}, exists // thread ids are global; another's is taken
		}
		return t, storeError(err, tid)
	}
	return t, storeErrorPublic(err)
}

// checkClaim refuses a non-admin caller a thread id that has no record but whose state a
// graph still keeps (a thread from before isolation was on, or one whose record went without
// its state: deleted by an older release, or dropped by the bounded store): it answers as for
// a taken id (409), so nobody takes over another's conversation by naming it. Every route
// that creates a thread with a caller's id asks it (threads create, a run's if_not_exists
// create; the hosting routes through hostingOwners.CreateThread). With isolation off every
// caller is the same principal and may pick the state up.
func (s *Service) checkClaim(ctx context.Context, tid string) error {
	if s.iso == nil || s.caller(ctx).Admin {
		return nil
	}
	if _, err := s.store.Get(ctx, tid); !errors.Is(err, threads.ErrThreadNotFound) {
		return nil // the record decides (newThread answers a taken id)
	}
	held, err := s.keepsState(ctx, tid)
	switch {
	case err != nil:
		return fmt.Errorf("check thread %s for kept state: %w", tid, err)
	case held:
		return apierror.Newf(apierror.ErrConflict, "Thread %s already exists", repr(tid))
	}
	return nil
}

// keepsState reports whether a hosted graph or a durable assistant keeps state for thread
// tid.
func (s *Service) keepsState(ctx context.Context, tid string) (bool, error) {
	held, err := s.app.HoldsThread(ctx, tid)
	if err != nil || held || s.durable == nil {
		return held, err
	}
	if _, err := s.durable.State(ctx, tid); err == nil {
		return true, nil
	} else if !errors.Is(err, host.ErrThreadNotFound) {
		return false, err
	}
	return false, nil
}

// storeErrorPublic answers a record that does not fit the store as 422.
func storeErrorPublic(err error) error {
	if errors.Is(err, threads.ErrTooLarge) {
		return apierror.New(apierror.ErrValidation, "Validation error: thread record exceeds the store's size limit")
	}
	return err
}

func (s *Service) serveThreadGet(w http.ResponseWriter, r *http.Request) {
	tid, err := pathThreadID(r)
	if err == nil {
		var t threads.Thread
		if t, err = s.visibleThread(r.Context(), tid); err == nil {
			s.writeJSON(w, r, http.StatusOK, s.withInterrupts(r, wireThread(t), t))
			return
		}
	}
	writeError(w, err, s.logger)
}

func (s *Service) serveThreadPatch(w http.ResponseWriter, r *http.Request) {
	t, err := s.patchThread(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, wireThread(t))
}

func (s *Service) patchThread(r *http.Request) (threads.Thread, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return threads.Thread{}, err
	}
	meta, err := s.readMetadata(r)
	if err != nil {
		return threads.Thread{}, err
	}
	if meta == nil {
		return s.visibleThread(r.Context(), tid)
	}
	if err := s.checkThread(r.Context(), tid); err != nil {
		return threads.Thread{}, err
	}
	patch := decodeMap(meta)
	if err := s.checkOwnerPatch(r.Context(), patch); err != nil {
		return threads.Thread{}, err
	}
	t, err := s.store.PatchMetadata(r.Context(), tid, patch, s.now())
	if err != nil {
		return t, storeErrorPublic(storeError(err, tid))
	}
	return t, nil
}

func (s *Service) serveThreadDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.deleteThread(r); err != nil {
		writeError(w, err, s.logger)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteThread removes what every graph holds for the thread (checkpoints, a durable run),
// then the record. A thread is deleted whole or not at all: when a graph's state cannot be
// removed the record stays (the delete answers 500 and can be retried), so a thread id whose
// state is still stored is never free for another caller to claim.
func (s *Service) deleteThread(r *http.Request) error {
	tid, err := pathThreadID(r)
	if err != nil {
		return err
	}
	if _, err := s.visibleThread(r.Context(), tid); err != nil {
		return err
	}
	if err := s.deleteThreadState(context.WithoutCancel(r.Context()), tid); err != nil {
		return err
	}
	if err := s.store.Delete(r.Context(), tid); err != nil {
		return storeError(err, tid)
	}
	return nil
}

// deleteThreadState removes the thread's state from every graph that keeps state per thread
// (ThreadDeleter: hosted graphs with checkpoints, the durable assistants), whichever graph the
// thread was last run on: a hosting route's invoke binds no graph to the thread, and a
// thread may have been run on several.
func (s *Service) deleteThreadState(ctx context.Context, tid string) error {
	var deleters []ThreadDeleter
	for _, info := range s.app.Graphs() {
		if g, ok := s.app.Graph(info.Name); ok {
			if d, ok := g.(ThreadDeleter); ok {
				deleters = append(deleters, d)
			}
		}
	}
	if d, ok := s.durable.(ThreadDeleter); ok {
		deleters = append(deleters, d)
	}
	for _, d := range deleters {
		if err := d.DeleteThread(ctx, tid); err != nil {
			return fmt.Errorf("delete the state of thread %s: %w", tid, err)
		}
	}
	return nil
}

// unsupportedThreadFilters are the search fields answered 501.
var unsupportedThreadFilters = []string{"values", "ids", "sort_by", "sort_order", "select", "extract"}

func (s *Service) parseThreadQuery(r *http.Request, paging bool) (threads.Query, error) {
	var q threads.Query
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return q, err
	}
	obj, err := parseBody(body, emptyOKObject)
	if err != nil {
		return q, err
	}
	var present []string
	for _, k := range unsupportedThreadFilters {
		if _, ok := obj[k]; ok {
			present = append(present, k)
		}
	}
	if len(present) > 0 {
		sort.Strings(present)
		return q, apierror.Newf(apierror.ErrNotImplemented, "Unsupported filter(s): %s", strings.Join(present, ", "))
	}
	meta, err := obj.optObject("metadata")
	if err != nil {
		return q, err
	}
	q.Metadata = decodeMap(meta)
	q.Metadata = s.ownedMetadata(r.Context(), q.Metadata) // a non-admin: only its own threads
	st, ok, err := obj.optString("status")
	if err != nil {
		return q, err
	}
	if ok {
		if !threads.Status(st).Valid() {
			return q, apierror.Invalid("status", "Input should be 'idle', 'busy', 'interrupted' or 'error'")
		}
		q.Status = threads.Status(st)
	}
	if paging {
		if q.Limit, err = obj.optInt("limit", 10, 1); err != nil {
			return q, err
		}
		if q.Offset, err = obj.optInt("offset", 0, 0); err != nil {
			return q, err
		}
	}
	return q, nil
}

func (s *Service) serveThreadsSearch(w http.ResponseWriter, r *http.Request) {
	q, err := s.parseThreadQuery(r, true)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	found, err := s.store.Search(r.Context(), q)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	out := make([]threadBody, 0, len(found))
	for _, t := range found {
		out = append(out, wireThread(t))
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

func (s *Service) serveThreadsCount(w http.ResponseWriter, r *http.Request) {
	q, err := s.parseThreadQuery(r, false)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	n, err := s.store.Count(r.Context(), q)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, n)
}

// readMetadata reads the optional "metadata" object of a create or patch body (empty allowed).
func (s *Service) readMetadata(r *http.Request) (json.RawMessage, error) {
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return nil, err
	}
	obj, err := parseBody(body, emptyOK)
	if err != nil {
		return nil, err
	}
	return obj.optObject("metadata")
}
